/**
 * pg-boss's worker on its NOTIFY path (`useListenNotify`, the queue created with `notify: true` by the
 * parent), fetching up to 100 jobs at a time and again at once while fetches come back full: with its
 * default of one job per fetch it falls behind 200 jobs/s for good and polls the backlog down every 30 s.
 * Returns when each job's handler was first called, by job id.
 */
import { PgBoss } from 'pg-boss';
import { serveContender } from '../lib/contender-entry.js';
import { now } from '../lib/pace.js';

interface Args {
  readonly pgUrl: string;
  readonly schema: string;
  readonly queue: string;
}

serveContender<Args>(async ({ pgUrl, schema, queue }) => {
  // pg-boss names its connections itself: the bench's name (PGAPPNAME) lets /proc readings count its backends.
  const boss = new PgBoss({
    connectionString: pgUrl,
    schema,
    useListenNotify: true,
    application_name: process.env.PGAPPNAME,
  });
  boss.on('error', (err) => console.error('pg-boss worker', err));
  await boss.start();
  await boss.createQueue(queue, { notify: true });
  let done = () => {};
  return {
    async run(goArgs) {
      const { messages } = goArgs as { messages: number };
      const handledAt = new Map<string, number>();
      const finished = new Promise<void>((r) => (done = r));
      await boss.work(queue, { batchSize: 100, burstWhenBatchFull: true }, async (jobs) => {
        for (const job of jobs) if (!handledAt.has(job.id)) handledAt.set(job.id, now());
        if (handledAt.size >= messages) done();
      });
      await finished;
      return { handledAt: [...handledAt] };
    },
    finish: () => done(), // report what arrived: the rest never did in time
    async close() {
      await boss.stop({ graceful: false });
    },
  };
});
