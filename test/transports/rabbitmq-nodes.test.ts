import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { connect, type Channel, type ChannelModel } from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WireMessage } from '../../src/core/wire.js';
import { createRabbitMqTransport, type RabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { NodeRotation } from '../../src/transports/rabbitmq/node-rotation.js';
import { resolveOptions, type RabbitMqTransportOptions } from '../../src/transports/rabbitmq/options.js';
import { testEnv, uniqueName } from '../support/env.js';
import { optionError as thrown } from '../support/option-error.js';
import { recordingLogger } from '../support/recording-logger.js';
import { waitFor } from '../support/wait.js';

const optionError = (options: unknown) => thrown(() => resolveOptions(options as RabbitMqTransportOptions));

describe('rabbitmq node list option', () => {
  const a = 'amqp://app:s3cret@mq-a:5672/shop';
  const b = 'amqp://app:s3cret@mq-b:5672/shop';

  it('takes one URL or a list, one per node, with the order and connect timeout defaults', () => {
    expect(resolveOptions({ url: a })).toMatchObject({ urls: [a], nodeOrder: 'random', connectTimeoutMs: 5_000 });
    const o = resolveOptions({ url: [a, b], nodeOrder: 'listed', connectTimeoutMs: 800 });
    expect(o).toMatchObject({ urls: [a, b], nodeOrder: 'listed', connectTimeoutMs: 800 });
    expect(Object.isFrozen(o.urls)).toBe(true);
    // A comma inside a password is part of that URL.
    expect(resolveOptions({ url: 'amqp://app:pa,ss@mq-a/shop' }).urls).toEqual(['amqp://app:pa,ss@mq-a/shop']);
  });

  it('refuses a comma-separated string, naming the option, without echoing the password', () => {
    const err = optionError({ url: `${a},${b}` });
    expect(err).toMatchObject({ code: 'SURETY_INVALID_OPTION', option: 'url' });
    expect(err.message).toContain('holds several URLs separated by commas: give one URL per node in a list');
    expect(err.message).not.toContain('s3cret');
    const hosts = optionError({ url: 'amqp://app:s3cret@mq-a,mq-b:5672/shop' });
    expect(hosts).toMatchObject({ option: 'url' });
    expect(hosts.message).toContain('names several hosts ("mq-a,mq-b")');
    expect(hosts.message).not.toContain('s3cret');
  });

  it('names the bad entry of a list and what is allowed', () => {
    expect(optionError({ url: [] }).message).toContain('must be a URL or a non-empty list of them, one per node');
    expect(optionError({ url: [a, 42] })).toMatchObject({ option: 'url[1]', detail: 'must be a non-empty string' });
    expect(optionError({ url: [a, 'http://mq-b:15672'] })).toMatchObject({
      option: 'url[1]',
      detail: 'must start with "amqp://" or "amqps://"',
    });
    expect(optionError({ url: [a, 'amqp://'] }).detail).toMatch(/^must name a host/);
    expect(optionError({ url: [a, 'amqp://app:s3cret@mq-b:5672/other'] })).toMatchObject({
      option: 'url[1]',
      detail: 'names another vhost than url[0]: every node of a cluster serves the same vhosts',
    });
    expect(optionError({ url: ['amqp://mq-a', 'amqp://mq-b', 'amqp://mq-a:5672'] })).toMatchObject({
      option: 'url[2]',
      detail: 'names the node amqp://mq-a:5672 again (as url[0] does)',
    });
    expect(optionError({ url: [a, b], nodeOrder: 'shuffle' }).detail).toBe('must be one of "random", "listed"');
    expect(optionError({ url: a, connectTimeoutMs: 0 }).option).toBe('connectTimeoutMs');
  });

  it('refuses a comma-separated string before connecting', async () => {
    await expect(createRabbitMqTransport({ url: `${testEnv.amqpUrl},${testEnv.amqpUrl}` })).rejects.toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      option: 'url',
    });
  });
});

describe('rabbitmq node rotation', () => {
  const urls = ['a', 'b', 'c'];
  const take = (nodes: NodeRotation, n: number) => Array.from({ length: n }, () => nodes.next());

  it('tries every node once per round, backing off only after a whole round failed', () => {
    const nodes = new NodeRotation(urls, 'listed');
    expect(take(nodes, 7)).toEqual([
      { url: 'a', backoffAttempt: 0 },
      { url: 'b', backoffAttempt: 0 },
      { url: 'c', backoffAttempt: 0 },
      { url: 'a', backoffAttempt: 1 },
      { url: 'b', backoffAttempt: 0 },
      { url: 'c', backoffAttempt: 0 },
      { url: 'a', backoffAttempt: 2 },
    ]);
  });

  it('starts at a random node, then goes on in list order', () => {
    expect(take(new NodeRotation(urls, 'random', () => 0.5), 3).map((n) => n.url)).toEqual(['b', 'c', 'a']);
    expect(take(new NodeRotation(urls, 'random', () => 0.99), 2).map((n) => n.url)).toEqual(['c', 'a']);
  });

  it('after losing a lasting connection, goes to the other nodes at once, and waits before coming back to it', () => {
    const nodes = new NodeRotation(urls, 'listed');
    take(nodes, 4); // a round failed; connected to a on the second
    nodes.lost(60_000);
    expect(take(nodes, 3)).toEqual([
      { url: 'b', backoffAttempt: 0 },
      { url: 'c', backoffAttempt: 0 },
      { url: 'a', backoffAttempt: 1 },
    ]);
  });

  it('counts a connection dropped at once as a failed attempt, so a flapping cluster is not hammered', () => {
    const nodes = new NodeRotation(urls, 'listed');
    for (let i = 0; i < 3; i++) {
      nodes.next();
      nodes.lost(5);
    }
    expect(nodes.next()).toEqual({ url: 'a', backoffAttempt: 1 });
  });

  it('with one node, waits a first backoff after a loss, as before', () => {
    const nodes = new NodeRotation(['a'], 'random');
    expect(nodes.next()).toEqual({ url: 'a', backoffAttempt: 0 });
    nodes.lost(60_000);
    expect(nodes.next()).toEqual({ url: 'a', backoffAttempt: 1 });
  });
});

/** A stand-in for one cluster node: forwards to the shared broker until `stop()` takes it down. */
class NodeStandIn {
  private readonly sockets = new Set<net.Socket>();
  private address = '';
  private constructor(private readonly server: net.Server) {}

  static async start(): Promise<NodeStandIn> {
    const target = new URL(testEnv.amqpUrl);
    const server = net.createServer();
    const node = new NodeStandIn(server);
    server.on('connection', (client) => {
      const broker = net.connect(Number(target.port || 5672), target.hostname);
      for (const [from, to] of [
        [client, broker],
        [broker, client],
      ] as const) {
        node.sockets.add(from);
        from.pipe(to);
        from.on('error', () => to.destroy());
        from.on('close', () => {
          node.sockets.delete(from);
          to.destroy();
        });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = new URL(testEnv.amqpUrl);
    url.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    node.address = url.toString();
    return node;
  }

  /** Fixed at start: it stays the node's address after it went away. */
  get url(): string {
    return this.address;
  }

  get connections(): number {
    return this.sockets.size / 2;
  }

  /** The node goes away: open connections are reset, new ones refused. */
  async stop(): Promise<void> {
    const closed = new Promise((resolve) => this.server.close(resolve));
    for (const socket of this.sockets) socket.resetAndDestroy();
    await closed;
  }
}

/** A "node" that accepts TCP and never says a word, like a hung broker. */
async function silentNode(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(testEnv.amqpUrl);
  url.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    url: url.toString(),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function wireMessage(): WireMessage {
  return { id: randomUUID(), headers: { 'surety-type': 'order.created' }, body: Buffer.from('{}') };
}

const masked = (url: string) => url.replace(/:[^:@/]+@/, ':***@');
const REPLACED = 'rabbitmq nacked every publish on a new channel; replacing it';

describe('rabbitmq transport over several nodes (stand-ins in front of the shared broker)', () => {
  let admin: ChannelModel;
  let ch: Channel;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    admin = await connect(testEnv.amqpUrl);
    admin.on('error', () => undefined);
    ch = await admin.createChannel();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });
  afterAll(async () => {
    await admin.close();
  });

  async function open(
    options: Omit<RabbitMqTransportOptions, 'exchange'>,
  ): Promise<{ t: RabbitMqTransport; queue: string; exchange: string }> {
    const exchange = uniqueName('nodes');
    const queue = uniqueName('nodes_q');
    await ch.assertExchange(exchange, 'topic', { durable: true });
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await ch.bindQueue(queue, exchange, '#');
    const t = await createRabbitMqTransport({ ...options, exchange, publishTimeoutMs: 5_000 });
    cleanups.push(
      () => ch.deleteExchange(exchange),
      () => ch.deleteQueue(queue),
      () => t.close(),
    );
    return { t, queue, exchange };
  }

  it('skips a node that refuses, and logs each node without its password', async () => {
    const { logger, lines } = recordingLogger();
    const down = 'amqp://guest:guest@127.0.0.1:1';
    const { t, queue } = await open({ url: [down, testEnv.amqpUrl], nodeOrder: 'listed', logger });
    expect(await t.waitUntilReady(10_000)).toBe(true);
    await t.publish({ topic: 'order.created', message: wireMessage() });
    expect((await ch.checkQueue(queue)).messageCount).toBe(1);
    expect(lines.find((l) => l.msg === 'rabbitmq connect failed; retrying')?.obj).toMatchObject({
      node: 'amqp://guest:***@127.0.0.1:1',
      err: expect.stringContaining('ECONNREFUSED'),
    });
    expect(lines.find((l) => l.msg === 'rabbitmq connected')?.obj).toMatchObject({ node: masked(testEnv.amqpUrl) });
    expect(JSON.stringify(lines)).not.toContain('guest:guest');
  });

  it('counts a node that accepts TCP but never answers as down after connectTimeoutMs', async () => {
    const silent = await silentNode();
    cleanups.push(() => silent.close());
    const { logger, lines } = recordingLogger();
    const { t } = await open({
      url: [silent.url, testEnv.amqpUrl],
      nodeOrder: 'listed',
      connectTimeoutMs: 500,
      logger,
    });
    expect(await t.waitUntilReady(15_000)).toBe(true);
    expect(lines.find((l) => l.msg === 'rabbitmq connect failed; retrying')?.obj).toMatchObject({
      node: masked(silent.url),
      err: expect.stringContaining('ETIMEDOUT'),
    });
    expect(lines.find((l) => l.msg === 'rabbitmq connected')?.obj).toMatchObject({ node: masked(testEnv.amqpUrl) });
  });

  it('replaces a new channel whose publishes are all nacked, and publishes on the next one', async () => {
    // A queue that takes nothing nacks from the first publish: the channel looks wedged.
    const full = uniqueName('nodes_full');
    cleanups.push(() => ch.deleteQueue(full));
    const { logger, lines } = recordingLogger();
    const { t, queue, exchange } = await open({ url: testEnv.amqpUrl, logger });
    expect(await t.waitUntilReady(10_000)).toBe(true);
    await ch.assertQueue(full, { durable: true, arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
    await ch.unbindQueue(queue, exchange, '#');
    await ch.bindQueue(full, exchange, '#');
    await expect(t.publish({ topic: 'order.created', message: wireMessage() })).rejects.toMatchObject({
      code: 'SURETY_PUBLISH_NACKED',
    });
    await waitFor('the channel to be replaced', () => lines.some((l) => l.msg === REPLACED), 10_000);
    await ch.unbindQueue(full, exchange, '#');
    await ch.bindQueue(queue, exchange, '#');
    expect(await t.waitUntilReady(10_000)).toBe(true);
    await t.publish({ topic: 'order.created', message: wireMessage() });
    expect((await ch.checkQueue(queue)).messageCount).toBe(1);
  });

  it('when its node goes away, publishes and consumes through the next one at once, without a backoff', async () => {
    const nodeA = await NodeStandIn.start();
    cleanups.push(() => nodeA.stop());
    const { logger, lines } = recordingLogger();
    // A backoff of 20 s would show: failing over must not wait for one.
    const { t } = await open({
      url: [nodeA.url, testEnv.amqpUrl],
      nodeOrder: 'listed',
      reconnect: { initialMs: 20_000, maxMs: 20_000 },
      logger,
    });
    expect(await t.waitUntilReady(10_000)).toBe(true);
    const group = uniqueName('nodes_group');
    cleanups.push(() => ch.deleteQueue(group));
    const consumed: string[] = [];
    await t.subscribe({ group, topics: ['order.created'] }, async (d) => {
      consumed.push(d.message.id);
      await d.ack();
    });
    const before = wireMessage();
    await t.publish({ topic: 'order.created', message: before });
    await waitFor('the first delivery', () => consumed.includes(before.id), 10_000);
    expect(lines.filter((l) => l.msg === 'rabbitmq connected').map((l) => l.obj.node)).toEqual([masked(nodeA.url)]);
    expect(nodeA.connections).toBe(1);
    // A connection dropped within a second counts as a failed connect; this one is to have lasted.
    const connectedAt = lines.find((l) => l.msg === 'rabbitmq connected')!.at;
    await waitFor('the connection to count as lasting', () => Date.now() - connectedAt > 1_100, 5_000);

    const stopped = Date.now();
    await nodeA.stop();
    await waitFor('the loss to be noticed', () => !t.isReady(), 10_000);
    expect(await t.waitUntilReady(10_000)).toBe(true);
    const failoverMs = Date.now() - stopped;
    const after = wireMessage();
    await t.publish({ topic: 'order.created', message: after });
    await waitFor('a delivery through the next node', () => consumed.includes(after.id), 10_000);
    expect(failoverMs).toBeLessThan(5_000);
    expect(lines.filter((l) => l.msg === 'rabbitmq connected').map((l) => l.obj.node)).toEqual([
      masked(nodeA.url),
      masked(testEnv.amqpUrl),
    ]);
  });
});
