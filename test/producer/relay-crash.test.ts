import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { Store } from '../../src/ports/store.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { testEnv } from '../support/env.js';
import { RabbitProbe } from '../support/rabbit.js';
import { exited, spawnTs } from '../support/spawn.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { waitFor } from '../support/wait.js';

const ROWS = 2_000;

/** A fresh relay in this process runs until `rows` rows are sent. */
async function takeOver(f: { store: Store }, probe: RabbitProbe, rows: number): Promise<void> {
  const transport = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange: probe.exchange });
  const relay = new OutboxRelay({
    store: f.store,
    publisher: transport,
    logger: silentLogger,
    retention: false,
    pollIntervalMs: 100,
  });
  await relay.start();
  try {
    await waitFor('every row sent', async () => (await f.store.outbox.stats()).sent === rows, 60_000);
  } finally {
    await relay.stop();
    await transport.close();
  }
}

describe('relay killed with SIGKILL (PostgreSQL -> RabbitMQ)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let probe: RabbitProbe;
  let queue: string;
  let ids: string[];

  beforeEach(async () => {
    f = await makePostgresFixture('crash');
    probe = await RabbitProbe.open('crash');
    queue = await probe.bindQueue('#');
    const outbox = new Outbox({ store: f.store });
    ids = [];
    for (let i = 0; i < ROWS; i += 100) {
      await f.store.transaction(async (tx) => {
        for (let j = 0; j < 100; j++)
          ids.push((await outbox.add(tx, { type: 'order.created', payload: { i: i + j } })).messageId);
      });
    }
  });
  afterEach(async () => {
    await probe.close();
    await f.teardown();
  });

  for (const [claims, crashAt, after] of [
    ['locked', 'after-claim', 1],
    ['locked', 'mid-publish', 700],
    ['locked', 'before-mark', 2],
    ['lease', 'after-claim', 1],
    ['lease', 'mid-publish', 700],
    ['lease', 'before-mark', 2],
  ] as const) {
    it(`loses nothing when killed ${crashAt} (${claims} claims)`, async () => {
      const child = spawnTs('support/relay-process.ts', {
        SURETY_PG_URL: testEnv.postgresUrl,
        SURETY_PG_SCHEMA: f.schema,
        SURETY_AMQP_URL: testEnv.amqpUrl,
        SURETY_EXCHANGE: probe.exchange,
        SURETY_CRASH_AT: crashAt,
        SURETY_CRASH_AFTER: String(after),
        SURETY_LEASE_MS: '1500',
        SURETY_CLAIMS: claims,
      });
      const end = await exited(child);
      expect(end.signal, end.stderr).toBe('SIGKILL');
      expect(end.stdout).toContain(`ready (${claims} claims)`); // it really ran in that mode
      const before = await f.store.outbox.stats();
      expect(before.sent).toBeLessThan(ROWS); // it really died mid-run

      // A fresh relay takes over: at once from locks that died with the connection, or once leases expire.
      await takeOver(f, probe, ROWS);

      const delivered = await probe.collect(queue, ROWS);
      const distinct = new Set(delivered);
      expect(distinct).toEqual(new Set(ids)); // none lost, and no id that was never in the outbox
      const duplicates = delivered.length - distinct.size;
      if (crashAt === 'after-claim') expect(duplicates).toBe(0); // nothing was published before the kill
      if (crashAt === 'before-mark') expect(duplicates).toBeGreaterThan(0); // confirmed-but-unmarked rows went out again, same ids
    });
  }

  it('loses nothing when killed at a random moment, twice (locked, then lease claims)', async () => {
    for (const claims of ['locked', 'lease']) {
      const child = spawnTs('support/relay-process.ts', {
        SURETY_PG_URL: testEnv.postgresUrl,
        SURETY_PG_SCHEMA: f.schema,
        SURETY_AMQP_URL: testEnv.amqpUrl,
        SURETY_EXCHANGE: probe.exchange,
        SURETY_LEASE_MS: '1500',
        SURETY_BATCH: '50',
        SURETY_CLAIMS: claims,
      });
      const gone = exited(child);
      const sentBefore = (await f.store.outbox.stats()).sent;
      await waitFor(
        'the relay to make progress',
        async () => (await f.store.outbox.stats()).sent > sentBefore + 100,
        30_000,
        5,
      );
      child.kill('SIGKILL');
      expect((await gone).signal).toBe('SIGKILL');
    }
    await takeOver(f, probe, ROWS);
    expect(new Set(await probe.collect(queue, ROWS))).toEqual(new Set(ids));
  });
});

describe('relay whose transport is closed under it', () => {
  it('keeps yielding to the event loop and stops when asked (its own process, killed if it hangs)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'surety-closed-'));
    try {
      const child = spawnTs('support/closed-publisher-relay.ts', { SURETY_DIR: dir });
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const { code, signal, stdout, stderr } = await exited(child);
      clearTimeout(killer);
      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      expect(stdout.trim()).toBe('stopped');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
