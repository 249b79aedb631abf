import { connect, type Channel, type ChannelModel } from 'amqplib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger, type Logger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import {
  createRabbitMqTransport,
  type RabbitMqTransport,
  type RabbitMqTransportOptions,
} from '../../src/transports/rabbitmq/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { wire } from '../support/consumer-env.js';
import { testEnv, uniqueName } from '../support/env.js';
import { GatedProxy } from '../support/gated-proxy.js';

/** A consumer started right after its transport was created, as the README shows it. */
describe('rabbitmq transport: a consumer that starts before the broker answers', () => {
  let admin: ChannelModel;
  let ch: Channel;
  let f: StoreFixture;
  let cleanups: Array<() => Promise<unknown>>;

  beforeAll(async () => {
    admin = await connect(testEnv.amqpUrl);
    admin.on('error', () => {});
    ch = await admin.createChannel();
  });
  afterAll(async () => {
    await admin.close();
  });
  beforeEach(async () => {
    f = await makeSqliteFixture('startup');
    cleanups = [];
  });
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await f.teardown();
  });

  /** A transport whose topology declares the group's queue, and a consumer of that queue. */
  async function setUp(options: Partial<RabbitMqTransportOptions> = {}) {
    const exchange = uniqueName('startup');
    const queue = uniqueName('startup_billing');
    cleanups.push(
      () => ch.deleteExchange(exchange),
      () => ch.deleteQueue(queue),
    );
    const transport = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange,
      connectionName: uniqueName('startup'),
      topology: { queues: [{ name: queue, type: 'quorum' }], bindings: [{ exchange, queue, pattern: 'order.*' }] },
      ...options,
    });
    cleanups.push(() => transport.close());
    const handled: string[] = [];
    let onHandled: () => void = () => {};
    const consumer = new Consumer({
      group: queue,
      store: f.store as unknown as ConsumerStore,
      transport,
      logger: silentLogger,
    }).on('order.created', async (order: { id: string }) => {
      handled.push(order.id);
      onHandled();
    });
    cleanups.push(() => consumer.stop());
    const handles = async (t: RabbitMqTransport, id: string): Promise<void> => {
      const done = new Promise<void>((resolve) => (onHandled = resolve));
      expect(await t.waitUntilReady(10_000)).toBe(true);
      await t.publish({ topic: 'order.created', message: wire({ type: 'order.created', payload: { id } }) });
      await done;
      expect(handled).toEqual([id]);
    };
    return { transport, consumer, handles };
  }

  /** A logger that reports each warning to `onWarn`. */
  const warnings = (onWarn: (msg: string) => void): Logger => ({
    ...silentLogger,
    warn: (_obj: object, msg?: string) => onWarn(msg ?? ''),
  });

  it('starts right after createRabbitMqTransport and consumes its topology queue', async () => {
    const { transport, consumer, handles } = await setUp();
    await consumer.start();
    await handles(transport, 'o-1');
  });

  it('waits for a broker that refuses connections at first, then starts once it answers', async () => {
    const proxy = await GatedProxy.reserve();
    cleanups.push(() => proxy.close());
    let refused: () => void = () => {};
    const firstRefusal = new Promise<void>((resolve) => (refused = resolve));
    const logger = warnings((msg) => msg === 'rabbitmq connect failed; retrying' && refused());
    const { transport, consumer, handles } = await setUp({
      url: proxy.url,
      reconnect: { initialMs: 50, maxMs: 200 },
      logger,
    });
    let started = false;
    const starting = consumer.start().then(() => (started = true));
    await firstRefusal;
    expect(started).toBe(false);
    await proxy.listen();
    await starting;
    await handles(transport, 'o-2');
  });

  it('stops waiting when the transport is closed meanwhile: SURETY_TRANSPORT_CLOSED, at once', async () => {
    const proxy = await GatedProxy.reserve(); // never listens
    const { transport, consumer } = await setUp({ url: proxy.url, reconnect: { initialMs: 50, maxMs: 100 } });
    const starting = consumer.start().then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    const closedAt = Date.now();
    await transport.close();
    const err = await starting;
    expect(err?.code).toBe('SURETY_TRANSPORT_CLOSED');
    expect(Date.now() - closedAt).toBeLessThan(5_000); // not the 30 s of startTimeoutMs
  });

  it('rejects after startTimeoutMs when the broker never answers: how long, where to, and why, without the password', async () => {
    const proxy = await GatedProxy.reserve(); // never listens
    const url = new URL(proxy.url);
    url.password = 's3cret-pw';
    const { consumer } = await setUp({
      url: url.toString(),
      reconnect: { initialMs: 50, maxMs: 100 },
      startTimeoutMs: 300,
    });
    const started = Date.now();
    const err = await consumer.start().then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(err?.code).toBe('SURETY_CONNECTION_LOST');
    expect(err?.message).toMatch(
      new RegExp(
        `^could not subscribe to t_startup_billing_\\w+: no connection to RabbitMQ at amqp://guest:\\*\\*\\*@127\\.0\\.0\\.1:${url.port} ` +
          `within 300 ms \\(last error: ECONNREFUSED: connect ECONNREFUSED 127\\.0\\.0\\.1:${url.port}\\)$`,
      ),
    );
    expect(err?.message).not.toContain('s3cret');
  });
});
