import { createServer, type AddressInfo } from 'node:net';
import amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/admin/doctor/index.js';
import { createRabbitMqQueueProbe } from '../../src/transports/rabbitmq/index.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { ManagementStub } from '../support/doctor-management-stub.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

describe('RabbitMQ queue probe over AMQP (no management plugin)', () => {
  let conn: amqp.ChannelModel;
  let ch: amqp.Channel;
  const probe = createRabbitMqQueueProbe({ url: testEnv.amqpUrl });
  const q = {
    quorum: uniqueName('pq_quorum'),
    classic: uniqueName('pq_classic'),
    transient: uniqueName('pq_transient'),
  };

  beforeAll(async () => {
    conn = await amqp.connect(testEnv.amqpUrl);
    ch = await conn.createChannel();
    await ch.assertQueue(q.quorum, {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 7, 'x-overflow': 'reject-publish' },
    });
    await ch.assertQueue(q.classic, { durable: true, arguments: { 'x-max-length': 1_000, 'x-message-ttl': 60_000 } });
    await ch.assertQueue(q.transient, { durable: false, autoDelete: true });
  });
  afterAll(async () => {
    await probe.close();
    for (const name of Object.values(q)) await ch.deleteQueue(name).catch(() => undefined);
    await conn.close();
  });

  it('reads ready and consumer counts, durability, type and arguments', async () => {
    for (let i = 0; i < 3; i++) ch.sendToQueue(q.quorum, Buffer.from(`m${i}`), { persistent: true });
    const consumerChannel = await conn.createChannel();
    await consumerChannel.consume(q.classic, () => undefined);
    await waitFor('3 ready', async () => (await ch.checkQueue(q.quorum)).messageCount === 3);

    await expect(probe.inspect(q.quorum)).resolves.toEqual({
      name: q.quorum,
      exists: true,
      ready: 3,
      unacked: null,
      consumers: 0,
      durable: true,
      type: 'quorum',
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 7, 'x-overflow': 'reject-publish' },
      deliveryLimit: 7,
      deadLetters: null,
      source: 'amqp',
    });
    await expect(probe.inspect(q.classic)).resolves.toMatchObject({
      consumers: 1,
      durable: true,
      type: 'classic',
      arguments: { 'x-max-length': 1_000, 'x-message-ttl': 60_000 },
    });
    // auto-delete and not durable: both learnt, and the queue survives the probe (no consumer came and went).
    await expect(probe.inspect(q.transient)).resolves.toMatchObject({ exists: true, durable: false, type: 'classic' });
    await consumerChannel.close();
  });

  it('changes nothing: a missing queue stays missing, counts and arguments stay as they were', async () => {
    const missing = uniqueName('pq_missing');
    await expect(probe.inspect(missing)).resolves.toMatchObject({ exists: false, ready: 0, consumers: 0 });
    const check = await conn.createChannel();
    check.on('error', () => undefined);
    await expect(check.checkQueue(missing)).rejects.toMatchObject({ code: 404 });
    const before = await ch.checkQueue(q.quorum);
    await probe.inspect(q.quorum);
    expect(await ch.checkQueue(q.quorum)).toEqual(before);
    // Re-declaring with the original arguments still succeeds: none was altered.
    await ch.assertQueue(q.quorum, {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 7, 'x-overflow': 'reject-publish' },
    });
  });

  it('an unreachable broker is a broker failure in the report, not a crash', async () => {
    const f = await makeSqliteFixture('probe_down');
    const down = createRabbitMqQueueProbe({ url: 'amqp://guest:guest@127.0.0.1:1', timeoutMs: 2_000 });
    try {
      await expect(down.inspect('x')).rejects.toThrow();
      const report = await runDoctor({ store: f.store, probe: down, knownQueues: ['billing'] });
      expect(report.checks.find((c) => c.id === 'broker.connection')).toMatchObject({
        level: 'fail',
        message: expect.stringMatching(/^cannot reach rabbitmq at amqp:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/),
      });
    } finally {
      await down.close();
      await f.teardown();
    }
  });

  it('cannot list queues over AMQP alone: without configured queues the doctor says the broker is not checked', async () => {
    expect(probe.listQueues).toBeUndefined();
    const f = await makeSqliteFixture('probe_unlisted');
    try {
      const report = await runDoctor({ store: f.store, probe });
      expect(report.checks.find((c) => c.place === 'broker')).toMatchObject({
        id: 'broker.queues',
        level: 'warn',
        message: 'no queue is configured, so rabbitmq is not checked',
      });
    } finally {
      await f.teardown();
    }
  });

  it('refuses bad options with their name', () => {
    expect(() => createRabbitMqQueueProbe({ url: 'http://x' })).toThrow(/invalid option "url"/);
    expect(() => createRabbitMqQueueProbe({ url: testEnv.amqpUrl, managementUrl: 'ftp://x' })).toThrow(
      /invalid option "managementUrl"/,
    );
  });
});

const idle = {
  durable: true,
  type: 'quorum',
  arguments: { 'x-queue-type': 'quorum' },
  messages_ready: 0,
  messages_unacknowledged: 0,
  consumers: 1,
} as const;

describe('RabbitMQ queue probe over the management API (local stub of its JSON)', () => {
  let stub: ManagementStub;
  beforeAll(async () => {
    stub = await ManagementStub.start('monitor', 's3cret');
    stub.put({
      vhost: 'shop',
      name: 'billing',
      durable: true,
      type: 'quorum',
      arguments: { 'x-queue-type': 'quorum' },
      messages_ready: 1_204,
      messages_unacknowledged: 17,
      consumers: 0,
      effective_policy_definition: { 'delivery-limit': 3 },
    });
    // Neither of these is listed for vhost shop: another vhost's queue, and a connection's exclusive queue.
    stub.put({ ...idle, vhost: 'other', name: 'elsewhere' });
    stub.put({ ...idle, vhost: 'shop', name: 'amq.gen-reply', durable: false, exclusive: true, consumers: 1 });
    stub.put({
      vhost: 'shop',
      name: 'audit.log',
      durable: false,
      type: 'classic',
      arguments: {},
      messages_ready: 0,
      messages_unacknowledged: 0,
      consumers: 2,
    });
  });
  afterAll(() => stub.close());

  it('reads unacked counts, durability and policies, with the credentials and vhost it was given', async () => {
    const probe = createRabbitMqQueueProbe({
      url: 'amqp://app:app-pw@127.0.0.1:5672/shop',
      managementUrl: `http://monitor:s3cret@${stub.url.slice('http://'.length)}`,
    });
    await expect(probe.inspect('billing')).resolves.toEqual({
      name: 'billing',
      exists: true,
      ready: 1_204,
      unacked: 17,
      consumers: 0,
      durable: true,
      type: 'quorum',
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 3 },
      deliveryLimit: 3,
      deadLetters: null,
      source: 'management',
    });
    await expect(probe.inspect('nope')).resolves.toMatchObject({ exists: false, source: 'management' });
    expect(stub.requests.at(-2)!.path).toBe('/api/queues/shop/billing');
    expect(probe.address).toBe(stub.url); // no credentials in messages

    const f = await makeSqliteFixture('probe_mgmt');
    try {
      const report = await runDoctor({ store: f.store, probe, knownQueues: ['billing', 'audit.log'] });
      expect(report.verdict.message).toBe('broker: billing has 1,204 ready and 0 consumers — the consumer is down');
      expect(report.checks.find((c) => c.id === 'broker.delivery-limit')).toMatchObject({
        facts: { deliveryLimit: 3 },
      });
      expect(report.checks.find((c) => c.id === 'broker.durability')).toMatchObject({ facts: { queue: 'audit.log' } });
    } finally {
      await f.teardown();
      await probe.close();
    }
  });

  it("lists the vhost's queues, and the doctor checks them when none is configured", async () => {
    const probe = createRabbitMqQueueProbe({
      url: 'amqp://app:app-pw@127.0.0.1:5672/shop',
      managementUrl: `http://monitor:s3cret@${stub.url.slice('http://'.length)}`,
    });
    const f = await makeSqliteFixture('probe_mgmt_listed');
    try {
      await expect(probe.listQueues!()).resolves.toEqual(['audit.log', 'billing']);
      expect(stub.requests.at(-1)!.path).toBe('/api/queues/shop?columns=name,exclusive');

      const report = await runDoctor({ store: f.store, probe });
      expect(report.verdict.message).toBe('broker: billing has 1,204 ready and 0 consumers — the consumer is down');
      expect(report.checks.find((c) => c.id === 'broker.queues')).toMatchObject({
        level: 'ok',
        facts: { broker: 'rabbitmq', listed: ['audit.log', 'billing'] },
      });
      expect(report.checks.filter((c) => c.id === 'broker.queue').map((c) => c.facts.queue)).toEqual([
        'audit.log',
        'billing',
      ]);
    } finally {
      await f.teardown();
      await probe.close();
    }
  });

  it("on RabbitMQ 4 judges quorum queues by the broker's default delivery limit, and checks parking queues", async () => {
    const v4 = await ManagementStub.start('monitor', 's3cret');
    v4.serverVersion = '4.0.5';
    const parked = (name: string) => ({
      ...idle,
      name,
      arguments: {
        'x-queue-type': 'quorum',
        'x-dead-letter-exchange': 'surety.dead-letters',
        'x-dead-letter-routing-key': name,
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    });
    const parking = (name: string, consumers: number) => ({
      ...idle,
      name: `${name}.dead-letters`,
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 1_000_000 },
      messages_ready: 2,
      consumers,
    });
    v4.put({ ...idle, name: 'orders' }); // declared by hand: nothing but its type
    v4.put(parked('billing'));
    v4.put(parking('billing', 1));
    v4.put(parked('shipping')); // its parking queue is missing
    v4.put(parked('audit'));
    v4.put(parking('audit', 0));
    const probe = createRabbitMqQueueProbe({ url: 'amqp://monitor:s3cret@127.0.0.1:5672', managementUrl: v4.url });
    const f = await makeSqliteFixture('probe_mgmt_v4');
    try {
      await expect(probe.inspect('orders')).resolves.toMatchObject({ deliveryLimit: 20, deadLetters: null });
      const report = await runDoctor({
        store: f.store,
        probe,
        knownQueues: ['orders', 'billing', 'shipping', 'audit'],
      });
      const limits = report.checks.filter((c) => c.id === 'broker.delivery-limit');
      expect(limits.map((c) => [c.facts.queue, c.level])).toEqual([['orders', 'fail']]);
      expect(limits[0]!.message).toBe(
        "orders gives up on a message after 20 deliveries (RabbitMQ 4's default) and has no dead-letter exchange — a message past the limit (a consumer crash loop, a long database outage) is dropped",
      );
      expect(report.verdict).toMatchObject({ place: 'broker', level: 'fail' });
      const parkingChecks = report.checks.filter((c) => c.id === 'broker.dead-letter-parking');
      expect(parkingChecks.map((c) => [c.facts.queue, c.level])).toEqual([
        ['billing', 'ok'],
        ['shipping', 'warn'],
        ['audit', 'warn'],
      ]);
      expect(parkingChecks[1]!.message).toBe(
        'shipping.dead-letters, where shipping parks the messages it gives up on, does not exist — they wait in shipping until it does',
      );
      expect(parkingChecks[2]!.message).toBe(
        'audit.dead-letters has no consumer — messages audit gives up on wait there (2 now) instead of reaching the dead-letter table',
      );
      // Listed, a parking queue is checked as a queue, never for its own (deliberate) delivery limit.
      const listed = await runDoctor({ store: f.store, probe });
      expect(listed.checks.filter((c) => c.id === 'broker.delivery-limit').map((c) => c.facts.queue)).toEqual([
        'orders',
      ]);
      expect(
        listed.checks.find((c) => c.id === 'broker.queue' && c.facts.queue === 'billing.dead-letters'),
      ).toBeDefined();
    } finally {
      await f.teardown();
      await probe.close();
      await v4.close();
    }
  });

  it('a refused listing is a broker failure in the report', async () => {
    const probe = createRabbitMqQueueProbe({
      url: 'amqp://monitor:wrong@127.0.0.1:5672/shop',
      managementUrl: stub.url,
    });
    const f = await makeSqliteFixture('probe_mgmt_refused');
    try {
      await expect(probe.listQueues!()).rejects.toThrow(
        /answered 401 for the queues of vhost "shop" \(check the credentials\)/,
      );
      const report = await runDoctor({ store: f.store, probe });
      expect(report.verdict).toMatchObject({ place: 'broker', level: 'fail' });
      expect(report.verdict.message).toMatch(
        /^broker: cannot reach rabbitmq at http:\/\/127\.0\.0\.1:\d+: .*answered 401/,
      );
    } finally {
      await f.teardown();
      await probe.close();
    }
  });

  it('falls back to the AMQP credentials, and reports a refused login', async () => {
    const probe = createRabbitMqQueueProbe({
      url: 'amqp://monitor:wrong@127.0.0.1:5672/shop',
      managementUrl: stub.url,
    });
    await expect(probe.inspect('billing')).rejects.toThrow(/answered 401 .*check the credentials/);
    const sent = stub.requests.at(-1)!.authorization!;
    expect(Buffer.from(sent.replace('Basic ', ''), 'base64').toString()).toBe('monitor:wrong');
  });
});

/** A local port nothing listens on: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('RabbitMQ queue probe with several cluster nodes', () => {
  const down = 'amqp://guest:guest@127.0.0.1:1';

  it('over AMQP, tries the nodes in turn and reads the queue through the one that answers', async () => {
    const queue = uniqueName('pq_nodes');
    const conn = await amqp.connect(testEnv.amqpUrl);
    const ch = await conn.createChannel();
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const probe = createRabbitMqQueueProbe({ url: [down, testEnv.amqpUrl] });
    try {
      expect(probe.address).toBe(`amqp://127.0.0.1:1, amqp://${new URL(testEnv.amqpUrl).host}`);
      await expect(probe.inspect(queue)).resolves.toMatchObject({ exists: true, type: 'quorum', source: 'amqp' });
    } finally {
      await probe.close();
      await ch.deleteQueue(queue);
      await conn.close();
    }
  });

  it('names every node that did not answer', async () => {
    const probe = createRabbitMqQueueProbe({ url: [down, 'amqp://guest:guest@127.0.0.1:2'], timeoutMs: 2_000 });
    try {
      await expect(probe.inspect('x')).rejects.toThrow(
        /^no node answered \(amqp:\/\/127\.0\.0\.1:1: .*ECONNREFUSED.*; amqp:\/\/127\.0\.0\.1:2: .*ECONNREFUSED.*\)$/,
      );
    } finally {
      await probe.close();
    }
  });

  it('over the management API, tries the nodes in turn and keeps to the one that answered', async () => {
    const stub = await ManagementStub.start('monitor', 's3cret');
    stub.put({ ...idle, vhost: '/', name: 'billing' });
    const refused = `http://127.0.0.1:${await closedPort()}`;
    const answering = stub.url;
    const probe = createRabbitMqQueueProbe({
      url: testEnv.amqpUrl,
      managementUrl: [refused.replace('//', '//monitor:s3cret@'), answering.replace('//', '//monitor:s3cret@')],
    });
    try {
      expect(probe.address).toBe(`${refused}, ${answering}`);
      await expect(probe.inspect('billing')).resolves.toMatchObject({ exists: true, consumers: 1 });
      await expect(probe.listQueues!()).resolves.toEqual(['billing']);
      // Every request went to the node that answers: the server's version (delivery-limit defaults), then the queues.
      expect(stub.requests.map((r) => r.path)).toEqual([
        '/api/overview?columns=rabbitmq_version',
        '/api/queues/%2F/billing',
        '/api/queues/%2F?columns=name,exclusive',
      ]);
      await stub.close();
      await expect(probe.inspect('billing')).rejects.toThrow(
        `management API at ${refused}, ${answering} did not answer`,
      );
    } finally {
      await probe.close();
    }
  });

  it('refuses a comma-separated string and a bad entry, naming it', () => {
    expect(() => createRabbitMqQueueProbe({ url: `${testEnv.amqpUrl},${down}` })).toThrow(
      /invalid option "url": holds several URLs separated by commas/,
    );
    expect(() =>
      createRabbitMqQueueProbe({ url: testEnv.amqpUrl, managementUrl: ['http://a:15672', 'ftp://b'] }),
    ).toThrow('invalid option "managementUrl[1]": must start with "http://" or "https://"');
  });
});
