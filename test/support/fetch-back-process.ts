/**
 * A consumer process whose fetchBack handler asks its parent, over the IPC channel, for every answer
 * the producer gives, and reports where it is, so a test decides what each process fetches and when
 * it commits. It handles the messages it is sent through the consumer's own processor (one
 * transaction per message, as for a delivery); the broker plays no part in the race under test.
 * Env: SURETY_DIALECT (postgres | mysql | sqlite), SURETY_STORE_AT (schema, table prefix or file),
 * SURETY_GROUP, SURETY_CURRENT_VERSION (1: give fetchBack a currentVersion reading the local row).
 */
import { silentLogger } from '../../src/core/logger.js';
import type { WireMessage } from '../../src/core/wire.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { fetchBack, type FetchedState } from '../../src/consumer/fetch-back.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { createMysqlStore } from '../../src/stores/mysql/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { customersTable } from './customers-table.js';
import { testEnv } from './env.js';
import type { ChildMessage, ParentMessage } from './fetch-back-protocol.js';
import { sessionId } from './lock-waits.js';

const env = (n: string) =>
  process.env[n] ??
  (() => {
    throw new Error(`${n} is required`);
  })();
const dialect = env('SURETY_DIALECT') as ConsumerStore['dialect'];
const at = env('SURETY_STORE_AT');
const store =
  dialect === 'postgres'
    ? await createPostgresStore({ connectionString: testEnv.postgresUrl, schema: at, poolSize: 2 })
    : dialect === 'mysql'
      ? await createMysqlStore({ uri: testEnv.mysqlUrl, tablePrefix: at, poolSize: 2 })
      : // Long enough to wait behind the other process's transaction, which the test holds open.
        await createSqliteStore({ path: at, busyTimeoutMs: 60_000 });
const customers = customersTable(store);

const send = (message: ChildMessage) => process.send!(message);
const answers = new Map<number, (value: FetchedState<{ name: string }>) => void>();
let nextFetch = 0;
let hold: boolean;
let released: (() => void) | undefined;

const handler = fetchBack<{ name: string }>({
  scope: 'customers',
  fetch: (key) =>
    new Promise((resolve) => {
      const id = nextFetch++;
      answers.set(id, resolve);
      send({ kind: 'fetch', id, key });
    }),
  apply: async (tx, key, state, version) => {
    await customers.upsert(tx, key, state.name, version);
    send({ kind: 'applied', version });
    if (hold) await new Promise<void>((resolve) => (released = resolve));
  },
  remove: async (tx, key) => void (await customers.remove(tx, key)),
  ...(process.env.SURETY_CURRENT_VERSION === '1' ? { currentVersion: customers.version } : {}),
});
const consumer = new Consumer({
  group: env('SURETY_GROUP'),
  store,
  transport: { subscribe: async () => ({ close: async () => undefined }) },
  logger: silentLogger,
}).on('customer.changed', async (payload, context) => {
  // Inside the transaction: the parent can now watch this session's lock waits.
  send({ kind: 'started', session: dialect === 'sqlite' ? null : await sessionId(dialect, context.tx) });
  await handler(payload, context);
});

process.on('message', (m: ParentMessage) => {
  if (m.kind === 'handle') {
    hold = m.hold;
    const message: WireMessage = { ...m.message, body: Buffer.from(m.message.body, 'base64') };
    consumer.processor.process([{ message, topic: 'customer.changed', replay: false }]).then(
      (outcomes) => send({ kind: 'done', outcomes }),
      (err: unknown) => send({ kind: 'error', message: String((err as Error).stack ?? err) }),
    );
  } else if (m.kind === 'answer') {
    answers.get(m.id)!(m.value);
  } else if (m.kind === 'release') {
    released?.();
  } else if (m.kind === 'stop') {
    void store.close().finally(() => process.exit(0));
  }
});
send({ kind: 'ready' });
