import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import type { RelayOptions } from '../../src/producer/relay-options.js';
import { createRabbitMqTransport, type RabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { testEnv, uniqueName } from '../support/env.js';
import { RabbitProbe } from '../support/rabbit.js';
import { waitFor } from '../support/wait.js';

const ROWS = 1_000;
const POISONED = 'order.poisoned';

/**
 * Rows the transport routes to an exchange that does not exist, among good rows: RabbitMQ closes
 * the publishing channel at each of them, and with it every confirm the channel owed.
 */
for (const [mode, options] of [
  ['locked claims', {}],
  ['lease claims', { lockedClaims: false }],
] as const) {
  describe(`relay on PostgreSQL (${mode}): publishes refused by RabbitMQ`, () => {
    let f: Awaited<ReturnType<typeof makePostgresFixture>>;
    let probe: RabbitProbe;
    let transport: RabbitMqTransport;
    let relay: OutboxRelay | undefined;
    const missing = uniqueName('missing');

    beforeEach(async () => {
      f = await makePostgresFixture('relay_refused');
      probe = await RabbitProbe.open('relay_refused');
      transport = await createRabbitMqTransport({
        url: testEnv.amqpUrl,
        exchange: probe.exchange,
        connectionName: uniqueName('relay_refused'),
        route: (topic) => ({ exchange: topic === POISONED ? missing : probe.exchange, routingKey: topic }),
      });
    });
    afterEach(async () => {
      await relay?.stop();
      relay = undefined;
      await transport.close();
      await probe.close();
      await f.teardown();
    });

    /** Commits `types.length` rows in one transaction, issued at once (pipelined); their message ids, in order. */
    async function commit(types: readonly string[]): Promise<string[]> {
      const outbox = new Outbox({ store: f.store });
      const added = await outbox.transaction((tx) =>
        Promise.all(types.map((type, i) => outbox.add(tx, { type, payload: { i } }))),
      );
      return added.map((a) => a.messageId);
    }

    /** Starts a relay and waits until no row is pending; the milliseconds until `sent` rows were sent (NaN if never). */
    async function drain(extra: Partial<RelayOptions>, sent: number): Promise<number> {
      const started = performance.now();
      relay = new OutboxRelay({
        store: f.store,
        publisher: transport,
        logger: silentLogger,
        retention: false,
        pollIntervalMs: 50,
        maxAttempts: 3,
        backoff: { initialMs: 50, maxMs: 200 },
        ...options,
        ...extra,
      });
      await relay.start();
      let sentMs = Number.NaN;
      await waitFor(
        'every row settled',
        async () => {
          const stats = await f.store.outbox.stats();
          if (stats.sent === sent && Number.isNaN(sentMs)) sentMs = performance.now() - started;
          return stats.pending === 0;
        },
        90_000,
        20,
      );
      await relay.stop();
      relay = undefined;
      return sentMs;
    }

    it('fails only the refused rows, with the broker reply; the good ones are sent without an attempt charged', async () => {
      const queue = await probe.bindQueue('order.*');
      expect(await transport.waitUntilReady(10_000)).toBe(true);

      // A clean run first, for the time the good rows take without refusals among them.
      const clean = await commit(Array.from({ length: ROWS }, () => 'order.created'));
      const cleanMs = await drain({}, ROWS);
      expect(new Set(await probe.takeAll(queue))).toEqual(new Set(clean));
      await f.pool.query(`DELETE FROM ${f.store.outbox.outboxTable}`);

      const types = Array.from({ length: ROWS }, (_, i) => (i % 100 === 50 ? POISONED : 'order.created'));
      const ids = await commit(types);
      const bad = ids.filter((_, i) => types[i] === POISONED);
      const good = ids.filter((_, i) => types[i] !== POISONED);
      expect(bad).toHaveLength(10);
      const poisonedMs = await drain({}, good.length);

      expect(await f.store.outbox.stats()).toMatchObject({ pending: 0, sent: 990, dead: 10 });
      const { rows } = await f.pool.query<{ message_id: string; status: string; attempts: number; last_error: string }>(
        `SELECT message_id, status, attempts, last_error FROM ${f.store.outbox.outboxTable}`,
      );
      const byId = new Map(rows.map((r) => [r.message_id, r]));
      expect(good.filter((id) => byId.get(id)?.status !== 'sent' || byId.get(id)?.attempts !== 0)).toEqual([]);
      const reply = `NOT_FOUND - no exchange '${missing}' in vhost '/'`;
      for (const id of bad) {
        expect(byId.get(id)).toMatchObject({ status: 'dead', attempts: 3 });
        expect(byId.get(id)!.last_error).toBe(
          `SURETY_PUBLISH_REFUSED: RabbitMQ refused message ${id} to "${POISONED}": ${reply}`,
        );
      }
      // No failed attempt recorded for a good row, three for each refused one.
      const history = await f.pool.query<{ message_id: string }>(
        `SELECT message_id FROM ${f.store.tables.outboxAttempts}`,
      );
      expect(new Set(history.rows.map((r) => r.message_id))).toEqual(new Set(bad));
      expect(history.rows).toHaveLength(30);

      // Every row is settled, so every copy the broker confirmed is in the queue by now.
      const copies = await probe.takeAll(queue);
      expect(new Set(copies)).toEqual(new Set(good));
      console.log(
        `relay (${mode}): ${ROWS} rows with 10 refused: ${copies.length - good.length} duplicate copies of ` +
          `${good.length} good messages, all sent in ${Math.round(poisonedMs)} ms against ${Math.round(cleanMs)} ms ` +
          `for ${ROWS} in a clean run (${(poisonedMs / cleanMs).toFixed(1)}x)`,
      );
    });
  });
}
