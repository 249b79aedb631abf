/** Stops the whole broker: runs alone (see vitest.disruptive.config.ts), never beside other tests. */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createRabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { startRabbit, stopRabbit } from '../support/broker-control.js';
import { testEnv } from '../support/env.js';
import { RabbitProbe } from '../support/rabbit.js';
import { waitFor } from '../support/wait.js';

describe('broker stopped mid-run and started again', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let probe: RabbitProbe;

  beforeEach(async () => {
    f = await makePostgresFixture('outage');
    probe = await RabbitProbe.open('outage');
  });
  afterEach(async () => {
    await probe.close().catch(() => undefined);
    await f.teardown();
  });
  afterAll(async () => {
    await startRabbit(); // never leave the broker down for the next test
  });

  it('recovers by itself and loses nothing', async () => {
    const queue = await probe.bindQueue('#');
    const outbox = new Outbox({ store: f.store });
    const transport = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange: probe.exchange,
      publishTimeoutMs: 3_000,
      reconnect: { initialMs: 100, maxMs: 1_000 },
    });
    const relay = new OutboxRelay({
      store: f.store,
      publisher: transport,
      outbox,
      logger: silentLogger,
      retention: false,
      pollIntervalMs: 50,
      backoff: { initialMs: 200, maxMs: 2_000 },
    });
    await relay.start();
    const ids: string[] = [];
    const produce = async (n: number) => {
      for (let i = 0; i < n; i++) {
        ids.push(
          (await outbox.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: { i } }))).messageId,
        );
      }
    };
    await produce(300);
    await waitFor('first rows sent', async () => (await f.store.outbox.stats()).sent > 0);

    await stopRabbit();
    await produce(300); // the service keeps committing while the broker is down
    await waitFor('the transport to notice', () => !transport.isReady());
    const during = await f.store.outbox.stats();
    expect(during.pending).toBeGreaterThan(0);
    expect(during.dead).toBe(0);
    await startRabbit();

    await probe.reopen();
    await waitFor(
      'every row sent after recovery',
      async () => (await f.store.outbox.stats()).sent === 600,
      90_000,
      100,
    );
    await relay.stop();
    await transport.close();
    expect((await f.store.outbox.stats()).dead).toBe(0);
    const delivered = new Set(await probe.collect(queue, 600));
    expect(delivered).toEqual(new Set(ids));
  });
});
