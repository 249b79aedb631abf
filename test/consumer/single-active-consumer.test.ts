import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEnvelope } from '../../src/core/envelope.js';
import { encodeEnvelope } from '../../src/core/wire.js';
import { createRabbitMqTransport, type RabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import type { AmqpConnection } from '../../src/transports/rabbitmq/driver.js';
import { learnQueueSettings } from '../../src/transports/rabbitmq/queue-settings.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { testEnv, uniqueName } from '../support/env.js';
import { ledgerEntries, orderedQueueTopology } from '../support/ledger.js';
import { disorder, OrderLog } from '../support/order-log.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';

const ACCOUNTS = 16;
const MESSAGES = 1_000;

const run = promisify(execFile);

/** The broker's list of a queue's consumers: "<active>\t<activity status>" each. */
async function consumersOf(queue: string): Promise<string[]> {
  const { stdout } = await run('rabbitmqctl', [
    'list_consumers',
    '-q',
    '--no-table-headers',
    'queue_name',
    'active',
    'activity_status',
  ]);
  return stdout
    .split('\n')
    .filter((line) => line.startsWith(`${queue}\t`))
    .map((line) => line.slice(queue.length + 1));
}

/** Resolves once the child printed "ready"; rejects with its stderr if it exits first. */
function ready(child: ChildProcess): Promise<void> {
  const end = exited(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready\n')) resolve();
    });
    void end.then((e) => reject(new Error(`consumer exited (${e.code ?? e.signal}) before ready: ${e.stderr}`)));
  });
}

describe('two consumer processes on one queue with single active consumer (PostgreSQL + RabbitMQ)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let log: OrderLog;
  let exchange: string;
  let queue: string;
  let publisher: RabbitMqTransport;
  let admin: amqp.ChannelModel;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    f = await makePostgresFixture('sac');
    log = new OrderLog(f.schema);
    await log.create(f.pool);
    exchange = uniqueName('sac');
    queue = uniqueName('ledger');
    publisher = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange,
      topology: orderedQueueTopology(exchange, queue),
    });
    expect(await publisher.waitUntilReady(10_000)).toBe(true);
    admin = await amqp.connect(testEnv.amqpUrl);
    admin.on('error', () => undefined);
  });
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill();
    await publisher.close();
    const ch = await admin.createChannel();
    await ch.deleteQueue(queue);
    await ch.deleteExchange(exchange);
    await admin.close();
    await f.teardown();
  });

  const spawnConsumer = (name: string) => {
    const child = spawnTs('support/ordered-consumer-process.ts', {
      SURETY_AMQP_URL: testEnv.amqpUrl,
      SURETY_EXCHANGE: exchange,
      SURETY_QUEUE: queue,
      SURETY_PG_URL: testEnv.postgresUrl,
      SURETY_PG_SCHEMA: f.schema,
      SURETY_NAME: name,
    });
    children.push(child);
    return child;
  };

  it('declares the queue so, keeps per-key order across both, and hands over on SIGKILL without loss', async () => {
    // The broker's own account of the queue, learnt through its equivalence check.
    const settings = await learnQueueSettings(admin as unknown as AmqpConnection, queue);
    expect(settings.arguments).toMatchObject({ 'x-queue-type': 'quorum', 'x-single-active-consumer': true });

    const first = spawnConsumer('first');
    await ready(first);
    const second = spawnConsumer('second');
    await ready(second);
    // Both subscribed, as the broker sees it: one active, one waiting.
    expect((await consumersOf(queue)).sort()).toEqual(['false\twaiting', 'true\tsingle_active']);

    const { entries, perAccount } = ledgerEntries(MESSAGES, ACCOUNTS);
    for (let i = 0; i < entries.length; i += 100) {
      // One channel writes publishes in call order: each account's entries reach the queue in order.
      await Promise.all(
        entries.slice(i, i + 100).map((entry) => {
          const envelope = createEnvelope({ type: 'ledger.entry', orderingKey: entry.account, payload: entry });
          return publisher.publish({ topic: 'ledger.entry', message: encodeEnvelope(envelope) });
        }),
      );
    }

    await waitFor('a quarter applied', async () => (await log.count(f.pool)) >= MESSAGES / 4, 120_000);
    const before = new Set(await log.handlers(f.pool));
    expect([...before]).toHaveLength(1); // one active consumer; without it the broker round-robins
    const [active] = [...before];
    const [victim, other] = active === 'first' ? [first, second] : [second, first];
    const survivor = active === 'first' ? 'second' : 'first';
    const killed = exited(victim);
    victim.kill('SIGKILL');
    expect((await killed).signal).toBe('SIGKILL');
    const atKill = await log.count(f.pool);
    expect(atKill).toBeLessThan(MESSAGES); // killed mid-run, with deliveries in flight

    await waitFor('every message applied', async () => (await log.count(f.pool)) >= MESSAGES, 180_000);
    const done = exited(other);
    other.kill('SIGKILL'); // nothing more commits while the log is read
    await done;
    const history = await log.history(f.pool);
    expect(disorder(history)).toEqual({ outOfOrder: 0, inversions: 0 });
    for (const h of history) {
      expect(h.seqs).toEqual(Array.from({ length: perAccount.get(h.orderingKey)! }, (_, n) => n)); // none lost, none twice
    }
    expect(history).toHaveLength(ACCOUNTS);
    // The survivor took over: it applied what the killed one had not.
    const handlers = await log.handlers(f.pool);
    const by = (name: string) => handlers.filter((h) => h === name).length;
    expect(by(survivor)).toBeGreaterThan(0);
    expect(by(active!) + by(survivor)).toBe(MESSAGES);
  }, 240_000);
});
