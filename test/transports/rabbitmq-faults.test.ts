import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Channel } from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { WireMessage } from '../../src/core/wire.js';
import type { Delivery } from '../../src/ports/transport.js';
import {
  createRabbitMqTransport,
  parkingQueueName,
  type RabbitMqTransportOptions,
} from '../../src/transports/rabbitmq/index.js';
import { testEnv, uniqueName } from '../support/env.js';
import { adminAmqp } from '../support/rabbit-admin.js';
import { GatedProxy } from '../support/gated-proxy.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);

function wireMessage(id: string = randomUUID()): WireMessage {
  return { id, headers: { 'surety-type': 'order.created' }, body: Buffer.from('{"total":42}') };
}

function codeOf(err: unknown): string {
  return err instanceof PublishError ? err.code : `unexpected: ${String(err)}`;
}

async function outcomes(publishes: readonly Promise<void>[]): Promise<string[]> {
  return Promise.all(publishes.map((p) => p.then(() => 'ok', codeOf)));
}

/** Has RabbitMQ itself close the connections with this client-provided name (others are left alone). */
async function forceClose(connectionName: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', ['list_connections', 'pid', 'client_properties', '-q']);
  const pids = stdout
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${connectionName}"}`))
    .map((line) => line.split('\t')[0]!);
  for (const pid of pids) await run('rabbitmqctl', ['close_connection', pid, 'surety test: forced close']);
  return pids.length;
}

describe('rabbitmq transport: confirms, timeouts and connection loss', () => {
  let ch: Channel;
  let cleanups: Array<() => Promise<unknown>> = [];

  const amqp = adminAmqp();
  beforeEach(async () => {
    ch = amqp.channel;
  });
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups = [];
    await ch.close();
  });

  /** A ready transport on its own exchange, with `queue` bound to every topic. */
  async function open(label: string, options: Partial<RabbitMqTransportOptions> = {}) {
    const exchange = options.exchange ?? uniqueName(label);
    const queue = uniqueName(`${label}_q`);
    const connectionName = uniqueName(label);
    const t = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange,
      connectionName,
      topology: { queues: [{ name: queue }], bindings: [{ exchange, queue, pattern: '#' }] },
      ...options,
    });
    cleanups.push(
      () => ch.deleteExchange(exchange),
      () => ch.deleteQueue(queue),
      () => ch.deleteQueue(parkingQueueName(queue)),
      () => t.close(),
    );
    expect(await t.waitUntilReady(10_000)).toBe(true);
    return { t, exchange, queue, connectionName };
  }

  async function proxy(): Promise<GatedProxy> {
    const p = await GatedProxy.start();
    cleanups.push(() => p.close());
    return p;
  }

  it('resolves a publish only once the broker ack arrives', async () => {
    const p = await proxy();
    const { t, queue } = await open('confirm', { url: p.url });
    p.holdBrokerToClient();
    let settled = false;
    const publish = t.publish({ topic: 'order.created', message: wireMessage() }).finally(() => (settled = true));
    // The broker has the message (and has sent its ack, which the proxy holds back).
    await waitFor(
      'the broker to store the message',
      async () => (await ch.checkQueue(queue)).messageCount === 1,
      10_000,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    p.release();
    await expect(publish).resolves.toBeUndefined();
  });

  it('rejects with SURETY_PUBLISH_TIMEOUT when no confirm comes in time, and ignores the late acks', async () => {
    const p = await proxy();
    const { t, queue } = await open('timeout', { url: p.url, publishTimeoutMs: 300 });
    p.holdBrokerToClient();
    const started = Date.now();
    const timedOut = await outcomes(
      Array.from({ length: 20 }, () => t.publish({ topic: 'order.created', message: wireMessage() })),
    );
    expect(timedOut).toEqual(Array.from({ length: 20 }, () => 'SURETY_PUBLISH_TIMEOUT'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    // The late acks of those 20 arrive now; a confirm must still reach the right publish.
    p.release();
    await expect(t.publish({ topic: 'order.created', message: wireMessage() })).resolves.toBeUndefined();
    expect((await ch.checkQueue(queue)).messageCount).toBe(21);
  });

  it('rejects in-flight publishes with SURETY_CONNECTION_LOST when RabbitMQ closes the connection, fails fast while down, then recovers', async () => {
    const p = await proxy();
    const { t, queue, connectionName } = await open('conn_lost', {
      url: p.url,
      reconnect: { initialMs: 1_000, maxMs: 2_000 },
      // rabbitmqctl takes seconds on a busy machine: the held publishes must not time out before the close.
      publishTimeoutMs: 120_000,
    });
    // The broker never sees these, so no confirm can race the close.
    p.holdClientToBroker();
    const inFlight = outcomes(
      Array.from({ length: 50 }, () => t.publish({ topic: 'order.created', message: wireMessage() })),
    );
    expect(await forceClose(connectionName)).toBe(1);
    expect(await inFlight).toEqual(Array.from({ length: 50 }, () => 'SURETY_CONNECTION_LOST'));

    // Reconnecting waits about a second (reconnect.initialMs): meanwhile nothing is buffered.
    expect(t.isReady()).toBe(false);
    await expect(t.publish({ topic: 'order.created', message: wireMessage() })).rejects.toMatchObject({
      code: 'SURETY_CONNECTION_LOST',
    });

    expect(await t.waitUntilReady(15_000)).toBe(true);
    await expect(t.publish({ topic: 'order.created', message: wireMessage() })).resolves.toBeUndefined();
    expect((await ch.checkQueue(queue)).messageCount).toBe(1);
  });

  it('under continuous load, survives a forced close: only SURETY_CONNECTION_LOST failures, and every confirmed message is consumed', async () => {
    const { t, connectionName } = await open('load');
    const group = uniqueName('load_group');
    cleanups.push(
      () => ch.deleteQueue(group),
      () => ch.deleteQueue(parkingQueueName(group)),
    );
    const consumed = new Set<string>();
    await t.subscribe({ group, topics: ['order.*'] }, async (d) => {
      consumed.add(d.message.id);
      await d.ack();
    });

    const confirmed: string[] = [];
    const failures: string[] = [];
    let stop = false;
    let inFlight = 0;
    const loop = (async () => {
      while (!stop) {
        if (!t.isReady()) await t.waitUntilReady(15_000);
        if (inFlight >= 500) {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        const message = wireMessage();
        inFlight++;
        void t
          .publish({ topic: 'order.created', message })
          .then(
            () => confirmed.push(message.id),
            (err: unknown) => failures.push(codeOf(err)),
          )
          .finally(() => inFlight--);
      }
    })();

    await waitFor('1,000 confirms', () => confirmed.length >= 1_000, 30_000);
    expect(await forceClose(connectionName)).toBe(1);
    await waitFor('the loss to be noticed', () => failures.length > 0, 10_000);
    const before = confirmed.length;
    await waitFor('1,000 confirms after reconnecting', () => confirmed.length >= before + 1_000, 30_000);
    stop = true;
    await loop;
    await waitFor('the last publishes to settle', () => inFlight === 0, 15_000);

    expect(new Set(failures)).toEqual(new Set(['SURETY_CONNECTION_LOST']));
    // The subscription came back by itself: at-least-once for everything the broker confirmed.
    await waitFor('every confirmed message to be consumed', () => confirmed.every((id) => consumed.has(id)), 30_000);
  });

  it('after a reconnect, a delivery from the old channel settles as a no-op; the broker redelivers it', async () => {
    const { t, connectionName } = await open('stale');
    const group = uniqueName('stale_group');
    cleanups.push(
      () => ch.deleteQueue(group),
      () => ch.deleteQueue(parkingQueueName(group)),
    );
    const deliveries: Delivery[] = [];
    await t.subscribe({ group, topics: ['order.created'] }, async (d) => {
      deliveries.push(d); // settled by the test
    });
    const sent = wireMessage();
    await t.publish({ topic: 'order.created', message: sent });
    await waitFor('the first delivery', () => deliveries.length === 1, 10_000);

    expect(await forceClose(connectionName)).toBe(1);
    await waitFor('the redelivery on the new channel', () => deliveries.length === 2, 15_000);
    const [stale, fresh] = deliveries;
    expect(fresh!.message.id).toBe(sent.id);
    expect(fresh!.redeliveries).toBeGreaterThanOrEqual(1);
    // Both carry delivery tag 1 on their channels: acking the stale one on the new channel would
    // settle the fresh one, and the retry below would then kill the channel (unknown tag).
    await expect(stale!.ack()).resolves.toBeUndefined();
    await fresh!.retry();
    await waitFor('the retried message to come back', () => deliveries.length === 3, 15_000);
    expect(deliveries[2]!.message.id).toBe(sent.id);
    expect(deliveries[2]!.redeliveries).toBeGreaterThan(fresh!.redeliveries);
    await deliveries[2]!.ack();
    await waitFor('the queue to be empty', async () => (await t.inspectQueue(group))?.messageCount === 0, 10_000);
  });

  it('refuses a publish to a missing exchange with the reply of the broker, and recovers the channel', async () => {
    const missing = uniqueName('missing');
    const exchange = uniqueName('channel_lost');
    const { t, queue } = await open('channel_lost', {
      exchange,
      route: (topic) => ({ exchange: topic === 'lost' ? missing : exchange, routingKey: topic }),
    });
    await expect(t.publish({ topic: 'lost', message: wireMessage() })).rejects.toMatchObject({
      code: 'SURETY_PUBLISH_REFUSED',
      message: expect.stringContaining(`NOT_FOUND - no exchange '${missing}' in vhost '/'`),
    });
    expect(await t.waitUntilReady(10_000)).toBe(true);
    await expect(t.publish({ topic: 'order.created', message: wireMessage() })).resolves.toBeUndefined();
    expect((await ch.checkQueue(queue)).messageCount).toBe(1);
  });

  it('survives a reset TCP connection (connection error event) and reconnects', async () => {
    const p = await proxy();
    const warnings: string[] = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (_obj: object, msg?: string) => void warnings.push(msg ?? ''),
    };
    const { t, queue } = await open('reset', { url: p.url, logger });
    p.cutAll();
    await waitFor('the transport to notice', () => !t.isReady(), 10_000);
    expect(await t.waitUntilReady(15_000)).toBe(true);
    await expect(t.publish({ topic: 'order.created', message: wireMessage() })).resolves.toBeUndefined();
    expect((await ch.checkQueue(queue)).messageCount).toBe(1);
    expect(warnings).toContain('rabbitmq connection lost; reconnecting');
  });
});
