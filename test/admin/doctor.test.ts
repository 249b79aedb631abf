import type { ChildProcess } from 'node:child_process';
import amqp from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDoctor, type DoctorReport } from '../../src/admin/doctor/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { BrokerProbe } from '../../src/ports/broker-probe.js';
import { Outbox } from '../../src/producer/outbox.js';
import {
  createRabbitMqQueueProbe,
  createRabbitMqTransport,
  declareTopology,
  parkingQueueName,
  type RabbitMqTransport,
} from '../../src/transports/rabbitmq/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { wire } from '../support/consumer-env.js';
import { testEnv, uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';

const MIN = 60_000;

/** Acceptance 4: the doctor names the right place in three staged faults, with real components. */
describe('doctor (PostgreSQL + RabbitMQ)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let conn: amqp.ChannelModel;
  let ch: amqp.Channel;
  let exchange: string;
  let probe: BrokerProbe;
  let transport: RabbitMqTransport | undefined;
  let child: ChildProcess | undefined;
  const queues: string[] = [];

  beforeEach(async () => {
    f = await makePostgresFixture('doctor');
    conn = await amqp.connect(testEnv.amqpUrl);
    ch = await conn.createChannel();
    exchange = uniqueName('dx');
    await ch.assertExchange(exchange, 'topic', { durable: true });
    probe = createRabbitMqQueueProbe({ url: testEnv.amqpUrl });
  });
  afterEach(async () => {
    child?.kill('SIGKILL');
    child = undefined;
    await transport?.close();
    transport = undefined;
    await probe.close();
    for (const q of queues.splice(0)) {
      await ch.deleteQueue(q).catch(() => undefined);
      await ch.deleteQueue(parkingQueueName(q)).catch(() => undefined);
    }
    await ch.deleteExchange(exchange).catch(() => undefined);
    await conn.close();
    await f.teardown();
  });

  /** A durable quorum queue bound to every topic, declared as Surety declares it (with its parking queue). */
  async function quorumQueue(label: string): Promise<string> {
    const q = uniqueName(label);
    queues.push(q);
    await declareTopology(ch, { queues: [{ name: q }], bindings: [{ exchange, queue: q, pattern: '#' }] });
    return q;
  }

  async function openTransport(): Promise<RabbitMqTransport> {
    transport = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange, publishTimeoutMs: 5_000 });
    await transport.waitUntilReady(10_000);
    return transport;
  }

  const doctor = (queue: string, now?: number) =>
    runDoctor({ store: f.store, probe, knownQueues: [queue], ...(now === undefined ? {} : { now }) });
  const check = (report: DoctorReport, id: string) => report.checks.find((c) => c.id === id)!;

  it('relay stopped: names the producer and says the relay is down', async () => {
    const queue = await quorumQueue('relay_down');
    child = spawnTs('support/doctor-relay-process.ts', {
      SURETY_PG_URL: testEnv.postgresUrl,
      SURETY_PG_SCHEMA: f.schema,
      SURETY_AMQP_URL: testEnv.amqpUrl,
      SURETY_EXCHANGE: exchange,
    });
    const relayId = await readyLine(child);
    const outbox = new Outbox({ store: f.store });
    await f.store.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: { n: 1 } }));
    await waitFor('the relay to publish', async () => (await f.store.outbox.stats()).sent === 1);
    await ch.purgeQueue(queue);

    const healthy = await doctor(queue);
    expect(check(healthy, 'producer.pending').level).toBe('ok');
    expect(check(healthy, 'producer.relays')).toMatchObject({ level: 'ok' });
    expect(check(healthy, 'producer.relays').message).toContain(relayId);

    const killed = exited(child);
    child.kill('SIGKILL');
    expect((await killed).signal).toBe('SIGKILL');
    for (let i = 0; i < 5; i++)
      await f.store.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: { n: i } }));
    expect((await f.store.heartbeats.relays()).map((r) => r.relayId)).toEqual([relayId]); // the dead relay's row stays

    // Fourteen minutes later (an injected clock; the relay's real heartbeat row stopped at the kill).
    const report = await doctor(queue, Date.now() + 14 * MIN);
    expect(report.verdict).toMatchObject({
      place: 'producer',
      level: 'fail',
      message: 'producer: oldest pending message is 14 min old and no relay has claimed for 14 min — the relay is down',
    });
    expect(report.verdict.nextStep).toContain(relayId);
    expect(check(report, 'producer.pending').facts).toMatchObject({ pending: 5, sent: 1 });
  });

  it('consumer stopped: names the broker queue with its ready count and 0 consumers', async () => {
    const queue = await quorumQueue('consumer_down');
    const t = await openTransport();
    let handled = 0;
    const consumer = new Consumer({ group: queue, store: f.store, transport: t, logger: silentLogger }).on(
      'order.created',
      async () => {
        handled++;
      },
    );
    await consumer.start();
    for (let i = 0; i < 3; i++)
      await t.publish({ topic: 'order.created', message: wire({ type: 'order.created', payload: { i } }) });
    await waitFor('the consumer to handle 3', () => handled === 3);
    const healthy = await doctor(queue);
    expect(check(healthy, 'broker.queue')).toMatchObject({ level: 'ok', facts: { consumers: 1, ready: 0 } });

    await consumer.stop();
    for (let i = 0; i < 1_204; i++)
      await t.publish({ topic: 'order.created', message: wire({ type: 'order.created', payload: { i } }) });
    await waitFor('1,204 ready', async () => (await ch.checkQueue(queue)).messageCount === 1_204);

    const report = await doctor(queue);
    expect(report.verdict).toMatchObject({
      place: 'broker',
      level: 'fail',
      message: `broker: ${queue} has 1,204 ready and 0 consumers — the consumer is down`,
    });
    expect(report.verdict.nextStep).toContain(`start the consumer of ${queue}`);
    expect(check(report, 'producer.pending').level).toBe('ok');
    expect(report.checks.filter((c) => c.place === 'consumer' && c.level === 'fail')).toEqual([]);
  });

  it('consumer failing every message: names the consumer group and the error', async () => {
    const queue = await quorumQueue('consumer_fails');
    const t = await openTransport();
    const consumer = new Consumer({ group: queue, store: f.store, transport: t, logger: silentLogger }).on(
      'order.created',
      async () => {
        throw new Error('payment service returned 503');
      },
    );
    await consumer.start();
    try {
      for (let i = 0; i < 10; i++)
        await t.publish({ topic: 'order.created', message: wire({ type: 'order.created', payload: { i } }) });
      await waitFor('10 dead letters', async () => (await f.store.deadLetters.countDeadLetters(queue)).pending === 10);

      const report = await doctor(queue);
      expect(report.verdict).toMatchObject({
        place: 'consumer',
        level: 'fail',
        message: `consumer: consumer group ${queue} fails every message: payment service returned 503`,
      });
      expect(report.verdict.nextStep).toContain(`surety dlq replay --all-matching --group ${queue}`);
      expect(check(report, 'consumer.failing').facts).toMatchObject({ failures: 10, resolved: 0 });
      // Upstream is healthy: the queue is drained by a live consumer.
      expect(check(report, 'broker.queue')).toMatchObject({ level: 'ok', facts: { consumers: 1, ready: 0 } });
    } finally {
      await consumer.stop();
    }
  });

  it('flags a non-durable queue, a delivery limit that overrides the retry policy, and a missing queue', async () => {
    const transient = uniqueName('transient');
    const limited = uniqueName('limited');
    const missing = uniqueName('missing');
    await ch.assertQueue(transient, { durable: false });
    await ch.assertQueue(limited, {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 5, 'x-dead-letter-exchange': exchange },
    });
    queues.push(transient, limited);

    const report = await runDoctor({ store: f.store, probe, knownQueues: [transient, limited, missing] });
    const broker = report.checks.filter((c) => c.place === 'broker');
    expect(broker.find((c) => c.id === 'broker.durability')).toMatchObject({
      level: 'warn',
      message: `${transient} is not durable — it and its messages are lost when the broker restarts`,
    });
    const limit = broker.find((c) => c.id === 'broker.delivery-limit')!;
    expect(limit).toMatchObject({ level: 'warn', facts: { queue: limited, deliveryLimit: 5 } });
    expect(limit.message).toContain('overriding the dead-letter table');
    expect(broker.find((c) => c.id === 'broker.queue' && c.facts.queue === missing)).toMatchObject({
      level: 'fail',
      message: `${missing} does not exist — messages routed to it are dropped or returned unroutable`,
    });
    expect(report.verdict.place).toBe('broker');
    // The probe changed nothing: the missing queue was not created by the re-declares.
    await expect(probe.inspect(missing)).resolves.toMatchObject({ exists: false });

    // With the broker retry strategy the limit is the point, not a risk; non-persistent publishing is.
    const brokerRetry = await runDoctor({
      store: f.store,
      probe,
      knownQueues: [limited],
      facts: { retryStrategy: 'broker', persistentPublishing: false },
    });
    expect(brokerRetry.checks.some((c) => c.id === 'broker.delivery-limit')).toBe(false);
    expect(brokerRetry.checks.find((c) => c.id === 'broker.persistence')).toMatchObject({ level: 'warn' });
  });

  it("fails a delivery limit without a dead-letter exchange (messages dropped); Surety's parking passes", async () => {
    const bare = uniqueName('limit_bare');
    queues.push(bare);
    await ch.assertQueue(bare, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 3 } });
    const parked = uniqueName('limit_parked');
    queues.push(parked);
    transport = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange,
      topology: { queues: [{ name: parked, deliveryLimit: 3 }], bindings: [{ exchange, queue: parked, pattern: '#' }] },
    });
    await transport.waitUntilReady(10_000);
    const consumer = new Consumer({ group: parked, store: f.store, transport, logger: silentLogger }).on(
      'order.created',
      async () => {},
    );
    await consumer.start();
    const parking = parkingQueueName(parked);
    try {
      for (const retryStrategy of ['dead-letter-table', 'broker'] as const) {
        const report = await runDoctor({
          store: f.store,
          probe,
          knownQueues: [bare, parked],
          facts: { retryStrategy },
        });
        const limits = report.checks.filter((c) => c.id === 'broker.delivery-limit');
        expect(limits).toEqual([
          {
            id: 'broker.delivery-limit',
            place: 'broker',
            level: 'fail',
            message: `${bare} gives up on a message after 3 deliveries and has no dead-letter exchange — a message past the limit (${retryStrategy === 'broker' ? 'a failing handler, ' : ''}a consumer crash loop, a long database outage) is dropped (a policy's dead-letter exchange is only visible through the management API)`,
            facts: { queue: bare, deliveryLimit: 3, deadLetterExchange: null, retryStrategy },
            nextStep: `let Surety declare ${bare} with dead-letter parking (its default): move its messages away, delete it, and start the consumer; or give it a dead-letter exchange`,
          },
        ]);
        expect(report.verdict).toMatchObject({
          place: 'broker',
          level: 'fail',
          message: `broker: ${limits[0]!.message}`,
        });
        expect(check(report, 'broker.dead-letter-parking')).toMatchObject({
          level: 'ok',
          message: `${parked} parks the messages it gives up on in ${parking} (1 consumer)`,
          facts: { queue: parked, parkingQueue: parking, consumers: 1 },
        });
      }
      await consumer.stop();
      const undrained = await runDoctor({ store: f.store, probe, knownQueues: [parked] });
      expect(check(undrained, 'broker.dead-letter-parking')).toMatchObject({
        level: 'warn',
        message: `${parking} has no consumer — messages ${parked} gives up on wait there (0 now) instead of reaching the dead-letter table`,
      });
      await ch.deleteQueue(parking);
      const missing = await runDoctor({ store: f.store, probe, knownQueues: [parked] });
      expect(check(missing, 'broker.dead-letter-parking')).toMatchObject({ level: 'warn', facts: { exists: false } });
      expect(missing.checks.some((c) => c.id === 'broker.delivery-limit')).toBe(false);
    } finally {
      await consumer.stop();
    }
  });
});

/** Resolves with the relay id once the child prints "ready <id>". */
function readyLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /ready (\S+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code, signal) => reject(new Error(`relay exited early (${code ?? signal}): ${err}`)));
  });
}
