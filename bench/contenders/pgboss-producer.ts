/** pg-boss's producer: one `send` per job (its own transaction) at a steady rate, on its defaults. */
import { PgBoss } from 'pg-boss';
import { PAYLOAD } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';
import { atPace } from '../lib/pace.js';

interface Args {
  readonly pgUrl: string;
  readonly schema: string;
  readonly queue: string;
}

serveContender<Args>(async ({ pgUrl, schema, queue }) => {
  // pg-boss names its connections itself: the bench's name (PGAPPNAME) lets /proc readings count its backends.
  const boss = new PgBoss({ connectionString: pgUrl, schema, application_name: process.env.PGAPPNAME });
  boss.on('error', (err) => console.error('pg-boss producer', err));
  await boss.start();
  return {
    async run(goArgs) {
      const { messages, rate } = goArgs as { messages: number; rate: number };
      return { committedAt: await atPace(rate, messages, async () => (await boss.send(queue, PAYLOAD))!) };
    },
    async close() {
      await boss.stop({ graceful: false });
    },
  };
});
