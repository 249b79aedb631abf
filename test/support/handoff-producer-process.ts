/**
 * A producer with its relay in one process, for crash tests of the handoff: it commits
 * SURETY_ROWS messages one transaction at a time through outbox.transaction, which hands each row to
 * the relay, printing each committed id. It kills itself with SIGKILL at the point named by
 * SURETY_CRASH_AT, after SURETY_CRASH_AFTER occurrences:
 *   after-commit   a transaction committed and its row handed over (the publish may be on its way)
 *   before-mark    handed rows confirmed by the broker, not yet marked sent
 * A claim that returns rows prints "claimed <n>": with the handoff working there is none.
 */
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is required`);
  return v;
};
const crashAt = env('SURETY_CRASH_AT');
let remaining = Number(env('SURETY_CRASH_AFTER'));
const die = () => process.kill(process.pid, 'SIGKILL');

const base = await createPostgresStore({
  connectionString: env('SURETY_PG_URL'),
  schema: env('SURETY_PG_SCHEMA'),
});
// One outbox concern for the producer and the relay both: the handoff needs them to share it.
const outboxConcern: typeof base.outbox = Object.create(base.outbox);
outboxConcern.markSent = async (seqs, now) => {
  if (crashAt === 'before-mark' && --remaining <= 0) die();
  return base.outbox.markSent(seqs, now);
};
outboxConcern.claimLocked = async (req) => {
  const batch = await base.outbox.claimLocked(req);
  if (batch.rows.length > 0) process.stdout.write(`claimed ${batch.rows.length}\n`);
  return batch;
};
const store = { ...base, outbox: outboxConcern };
const transport = await createRabbitMqTransport({ url: env('SURETY_AMQP_URL'), exchange: env('SURETY_EXCHANGE') });
await transport.waitUntilReady(10_000);
const outbox = new Outbox({ store });
const relay = new OutboxRelay({
  store,
  publisher: transport,
  outbox,
  logger: silentLogger,
  retention: false,
  leaseMs: Number(env('SURETY_LEASE_MS')),
  pollIntervalMs: 600_000, // nothing but the handoff publishes here
  listen: false,
});
await relay.start();
for (let i = 0; i < Number(env('SURETY_ROWS')); i++) {
  const { messageId } = await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: { i } }));
  process.stdout.write(`committed ${messageId}\n`); // synchronous on a pipe: printed before any kill below
  if (crashAt === 'after-commit' && --remaining <= 0) die();
}
process.stdout.write('all committed\n');
