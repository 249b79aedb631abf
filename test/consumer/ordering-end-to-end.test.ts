import amqp from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createRabbitMqTransport, type RabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { testEnv, uniqueName } from '../support/env.js';
import { ledgerEntries, type LedgerEntry } from '../support/ledger.js';
import { disorder, OrderLog, variableWork } from '../support/order-log.js';
import { waitFor } from '../support/wait.js';

const KEYS = 16;
const MESSAGES = 1_000;
const PER_TRANSACTION = 8;

// Commit order per ordering key, through an ordered outbox and relay and RabbitMQ, to effect order.
const variants = [
  { name: 'default options', options: {} },
  { name: 'parallelism 4', options: { parallelism: 4 } },
  { name: 'handlerConcurrency 32', options: { parallelism: 1, handlerConcurrency: 32 } },
];

describe('per-key order from commit to effect (PostgreSQL + RabbitMQ)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let log: OrderLog;
  let exchange: string;
  let group: string;
  let transport: RabbitMqTransport;

  beforeEach(async () => {
    f = await makePostgresFixture('order_e2e');
    log = new OrderLog(f.schema);
    await log.create(f.pool);
    exchange = uniqueName('order_e2e');
    group = uniqueName('ledger');
    transport = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange,
      topology: { queues: [{ name: group }], bindings: [{ exchange, queue: group, pattern: 'ledger.#' }] },
    });
    expect(await transport.waitUntilReady(10_000)).toBe(true);
  });
  afterEach(async () => {
    await transport.close();
    const conn = await amqp.connect(testEnv.amqpUrl);
    const ch = await conn.createChannel();
    await ch.deleteQueue(group);
    await ch.deleteExchange(exchange);
    await conn.close();
    await f.teardown();
  });

  for (const { name, options } of variants) {
    it(`applies each ordering key's messages in commit order with ${name}`, async () => {
      // The business key is left to its default (the message id): it differs from the ordering key.
      const outbox = new Outbox({ store: f.store, ordered: true });
      const { entries, perAccount } = ledgerEntries(MESSAGES, KEYS);
      for (let i = 0; i < entries.length; i += PER_TRANSACTION) {
        await outbox.transaction(async (tx) => {
          for (const entry of entries.slice(i, i + PER_TRANSACTION)) {
            const added = await outbox.add(tx, { type: 'ledger.entry', orderingKey: entry.account, payload: entry });
            expect(added.envelope.key).toBe(added.envelope.id);
          }
        });
      }

      const relay = new OutboxRelay({
        store: f.store,
        publisher: transport,
        ordered: true,
        pollIntervalMs: 50,
        retention: false,
        logger: silentLogger,
      });
      await relay.start();
      // Half the backlog first, so the consumer starts on a full prefetch and then keeps up with the relay.
      await waitFor(
        'half the messages on the queue',
        async () => {
          return ((await transport.inspectQueue(group))?.messageCount ?? 0) >= MESSAGES / 2;
        },
        120_000,
      );

      const mislabelled: string[] = [];
      const consumer = new Consumer({
        group,
        store: f.store as unknown as ConsumerStore,
        transport,
        logger: silentLogger,
        ...options,
      }).on('ledger.entry', async (entry: LedgerEntry, { tx, envelope }) => {
        if (envelope.orderingKey !== entry.account) mislabelled.push(`${envelope.orderingKey} ≠ ${entry.account}`);
        await variableWork();
        await log.record(tx, entry.account, entry.seq, 'consumer');
      });
      await consumer.start();
      try {
        await waitFor('every message applied', async () => (await log.count(f.pool)) >= MESSAGES, 180_000);
      } finally {
        await consumer.stop();
        await relay.stop();
      }

      const history = await log.history(f.pool);
      expect(disorder(history)).toEqual({ outOfOrder: 0, inversions: 0 });
      expect(history).toHaveLength(KEYS);
      for (const h of history) {
        const count = perAccount.get(h.orderingKey)!;
        expect(h.seqs).toEqual(Array.from({ length: count }, (_, n) => n)); // each once, in commit order
      }
      expect(mislabelled).toEqual([]);
    }, 300_000);
  }
});
