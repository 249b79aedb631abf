import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { Publisher } from '../../src/ports/transport.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import type { RelayOptions } from '../../src/producer/relay-options.js';
import { createRabbitMqTransport, type RabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { uniqueName } from '../support/env.js';
import { GatedProxy } from '../support/gated-proxy.js';
import { RabbitProbe } from '../support/rabbit.js';
import { storeFixtures } from '../support/stores.js';
import { waitFor } from '../support/wait.js';

const ROWS = 200;

const variants: [name: string, make: (typeof storeFixtures)['postgres'], mode: Partial<RelayOptions>][] = [
  ['postgres, locked claims', storeFixtures.postgres, {}],
  ['postgres, lease claims', storeFixtures.postgres, { lockedClaims: false }],
  ['mysql', storeFixtures.mysql, {}],
  ['sqlite', storeFixtures.sqlite, {}],
];

for (const [name, makeFixture, mode] of variants) {
  describe(`relay on ${name}: the broker connection lost with publishes in flight`, () => {
    let f: StoreFixture;
    let probe: RabbitProbe;
    let proxy: GatedProxy;
    let transport: RabbitMqTransport;
    let relay: OutboxRelay | undefined;

    beforeEach(async () => {
      f = await makeFixture('relay_conn_lost');
      probe = await RabbitProbe.open('relay_conn_lost');
      proxy = await GatedProxy.start();
      transport = await createRabbitMqTransport({
        url: proxy.url,
        exchange: probe.exchange,
        connectionName: uniqueName('relay_conn_lost'),
        reconnect: { initialMs: 50, maxMs: 200 },
      });
    });
    afterEach(async () => {
      await relay?.stop();
      await transport.close();
      await proxy.close();
      await probe.close();
      await f.teardown();
    });

    it('charges no attempt: every row ends sent, with attempts 0 and no failed attempt in its history', async () => {
      const queue = await probe.bindQueue('order.*');
      expect(await transport.waitUntilReady(10_000)).toBe(true);
      // The broker never sees what is published from now on over this connection: no confirm can come.
      proxy.holdClientToBroker();
      let published = 0;
      const counting: Publisher = {
        publish: (out) => {
          published++;
          return transport.publish(out);
        },
        isReady: () => transport.isReady(),
        waitUntilReady: (ms) => transport.waitUntilReady(ms),
        close: () => transport.close(),
      };
      const outbox = new Outbox({ store: f.store });
      const ids = await outbox.transaction(async (tx) => {
        const added: string[] = [];
        for (let i = 0; i < ROWS; i++)
          added.push((await outbox.add(tx, { type: 'order.created', payload: { i } })).messageId);
        return added;
      });
      relay = new OutboxRelay({
        store: f.store,
        publisher: counting,
        logger: silentLogger,
        retention: false,
        pollIntervalMs: 50,
        maxAttempts: 1, // one charged attempt would kill a row
        backoff: { initialMs: 100, maxMs: 200 },
        ...mode,
      });
      await relay.start();
      await waitFor('every row published', () => published >= ROWS, 30_000);

      proxy.cutAll(); // reset the connection under the unconfirmed publishes
      await waitFor(
        'every row settled after reconnecting',
        async () => (await f.store.outbox.stats()).pending === 0,
        60_000,
      );

      expect(await f.store.outbox.stats()).toMatchObject({ pending: 0, sent: ROWS, dead: 0 });
      for (const id of ids) {
        expect(await f.store.outbox.get(id)).toMatchObject({ status: 'sent', attempts: 0 });
        expect((await f.store.admin.lineage(id))?.outbox?.history).toEqual([]);
      }
      const metrics = await relay.registry.metrics();
      expect(metrics).toMatch(
        new RegExp(`surety_relay_publish_attempts_total\\{outcome="connection_lost"\\} ${ROWS}\\b`),
      );
      expect(new Set(await probe.takeAll(queue))).toEqual(new Set(ids));
    });
  });
}
