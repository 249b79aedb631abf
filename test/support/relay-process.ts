/**
 * A relay in its own process, for crash tests. It kills itself with SIGKILL at the point named by
 * SURETY_CRASH_AT, after SURETY_CRASH_AFTER occurrences:
 *   after-claim    rows claimed, nothing published yet
 *   mid-publish    some publishes sent, others not yet
 *   before-mark    publishes confirmed by the broker, not yet marked sent
 *   none           run until SIGTERM
 * SURETY_CLAIMS picks the relay's claims: "locked" (row locks of an open transaction, the
 * PostgreSQL default) or "lease". Prints "ready (<mode> claims)" when started.
 */
import pg from 'pg';
import { silentLogger } from '../../src/core/logger.js';
import type { OutboxRelayStore } from '../../src/ports/outbox-store.js';
import type { Publisher } from '../../src/ports/transport.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is required`);
  return v;
};
const crashAt = process.env.SURETY_CRASH_AT ?? 'none';
let remaining = Number(process.env.SURETY_CRASH_AFTER ?? '1');
const die = () => process.kill(process.pid, 'SIGKILL');
const tick = () => --remaining <= 0;

const pool = new pg.Pool({ connectionString: env('SURETY_PG_URL'), max: 4 });
const base = await createPostgresStore({ pool, schema: env('SURETY_PG_SCHEMA') });
const outbox: OutboxRelayStore = Object.create(base.outbox) as OutboxRelayStore;
outbox.claim = async (req) => {
  const rows = await base.outbox.claim(req);
  if (crashAt === 'after-claim' && rows.length > 0 && tick()) die();
  return rows;
};
outbox.markSent = async (seqs, now) => {
  if (crashAt === 'before-mark' && tick()) die();
  return base.outbox.markSent(seqs, now);
};
outbox.claimLocked = async (req) => {
  const batch = await base.outbox.claimLocked(req);
  if (crashAt === 'after-claim' && batch.rows.length > 0 && tick()) die();
  return {
    rows: batch.rows,
    settle: async (sent, failures, now) => {
      if (crashAt === 'before-mark' && tick()) die();
      return batch.settle(sent, failures, now);
    },
    release: () => batch.release(),
  };
};
const transport = await createRabbitMqTransport({ url: env('SURETY_AMQP_URL'), exchange: env('SURETY_EXCHANGE') });
const publisher: Publisher = {
  publish: (out) => {
    const p = transport.publish(out);
    if (crashAt === 'mid-publish' && tick()) die();
    return p;
  },
  isReady: () => transport.isReady(),
  waitUntilReady: (ms) => transport.waitUntilReady(ms),
  close: () => transport.close(),
};
const relay = new OutboxRelay({
  store: { ...base, outbox },
  publisher,
  logger: silentLogger,
  retention: false,
  leaseMs: Number(process.env.SURETY_LEASE_MS ?? '2000'),
  batchSize: Number(process.env.SURETY_BATCH ?? '200'),
  pollIntervalMs: 50,
  lockedClaims: (process.env.SURETY_CLAIMS ?? 'locked') === 'locked',
});
await relay.start();
process.stdout.write(`ready (${relay.locked ? 'locked' : 'lease'} claims)\n`);
process.once('SIGTERM', () => {
  void relay
    .stop()
    .then(() => transport.close())
    .then(() => pool.end())
    .then(() => process.exit(0));
});
