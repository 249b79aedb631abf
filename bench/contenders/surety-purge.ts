/**
 * The statement the relay's retention runs (`purgeSent`, its default batch of 1,000), in a loop until
 * nothing older than `before` is left or `max` rows are gone: the rate retention can delete at.
 */
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { serveContender } from '../lib/contender-entry.js';

interface Args {
  readonly pgUrl: string;
  readonly schema: string;
}

serveContender<Args>(async ({ pgUrl, schema }) => {
  const store = await createPostgresStore({ connectionString: pgUrl, schema });
  return {
    async run(goArgs) {
      const { before, max } = goArgs as { before: number; max?: number };
      let deleted = 0;
      for (;;) {
        const n = await store.outbox.purgeSent(before, 1_000);
        deleted += n;
        if (n < 1_000 || (max !== undefined && deleted >= max)) break;
      }
      return { deleted };
    },
    async close() {
      await store.close();
    },
  };
});
