import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { testEnv } from '../support/env.js';
import { RabbitProbe } from '../support/rabbit.js';
import { storeFixtures } from '../support/stores.js';
import { waitFor } from '../support/wait.js';

const ROWS = 10_000;

// PostgreSQL in both claim modes (locked is its default); MySQL claims with leases.
for (const [dialect, lockedClaims] of [
  ['postgres', true],
  ['postgres', false],
  ['mysql', false],
] as const) {
  describe(`several relays over one outbox (${dialect}, ${lockedClaims ? 'locked' : 'lease'} claims)`, () => {
    let f: StoreFixture;
    let probe: RabbitProbe;

    beforeEach(async () => {
      f = await storeFixtures[dialect](`multi_${dialect}`);
      probe = await RabbitProbe.open(`multi_${dialect}`);
    });
    afterEach(async () => {
      await probe.close();
      await f.teardown();
    });

    for (const relayCount of [2, 4]) {
      it(`${relayCount} relays publish each of ${ROWS} rows exactly once`, async () => {
        const queue = await probe.bindQueue('#');
        const outbox = new Outbox({ store: f.store });
        const ids: string[] = [];
        for (let i = 0; i < ROWS; i += 500) {
          await f.store.transaction(async (tx) => {
            for (let j = 0; j < 500; j++)
              ids.push((await outbox.add(tx, { type: 'order.created', payload: { n: i + j } })).messageId);
          });
        }
        const transports = await Promise.all(
          Array.from({ length: relayCount }, () =>
            createRabbitMqTransport({ url: testEnv.amqpUrl, exchange: probe.exchange }),
          ),
        );
        const relays = transports.map(
          (publisher) =>
            new OutboxRelay({
              store: f.store,
              publisher,
              logger: silentLogger,
              retention: false,
              batchSize: 200,
              pollIntervalMs: 20,
              lockedClaims,
            }),
        );
        await Promise.all(relays.map((r) => r.start()));
        await waitFor('every row sent', async () => (await f.store.outbox.stats()).sent === ROWS, 90_000, 100);
        await Promise.all(relays.map((r) => r.stop()));
        await Promise.all(transports.map((t) => t.close()));
        const delivered = await probe.collect(queue, ROWS);
        expect(delivered.length).toBe(ROWS);
        expect(new Set(delivered)).toEqual(new Set(ids));
        const perRelay = await Promise.all(relays.map((r) => r.metrics.attempts.get()));
        const confirmedBy = perRelay.map((m) => m.values.find((v) => v.labels.outcome === 'confirmed')?.value ?? 0);
        expect(confirmedBy.filter((n) => n > 0).length).toBeGreaterThan(1); // the work really was shared
      });
    }
  });
}
