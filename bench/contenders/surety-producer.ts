/**
 * A service committing business transactions with Surety's outbox, as the README writes it: one order
 * row and (unless `outbox` is false, the business-only baseline) its event in `outbox.transaction`.
 * `go` either commits `messages` transactions with `concurrency` callers as fast as they go, or paces
 * them at `rate` per second and returns each commit time.
 */
import { Outbox } from '../../src/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { PAYLOAD, TYPE } from '../lib/config.js';
import { serveContender } from '../lib/contender-entry.js';
import { atPace } from '../lib/pace.js';

interface Args {
  readonly pgUrl: string;
  readonly schema: string;
  readonly outbox: boolean;
}

interface Go {
  readonly messages: number;
  readonly rate?: number;
  readonly concurrency?: number;
}

serveContender<Args>(async ({ pgUrl, schema, outbox: withOutbox }) => {
  const store = await createPostgresStore({ connectionString: pgUrl, schema });
  const outbox = new Outbox({ store });
  const order = `INSERT INTO "${schema}".orders (total) VALUES ($1)`;
  const commit = () =>
    outbox.transaction(async (tx) => {
      await tx.query(order, [1234]);
      return withOutbox ? (await outbox.add(tx, { type: TYPE, payload: PAYLOAD })).messageId : '';
    });
  return {
    async run(goArgs) {
      const { messages, rate, concurrency = 1 } = goArgs as Go;
      if (rate) return { committedAt: await atPace(rate, messages, commit) };
      let next = 0;
      const worker = async () => {
        while (next++ < messages) await commit();
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      return { committed: messages };
    },
    async close() {
      await store.close();
    },
  };
});
