import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnvelope, type MessageInput } from '../../src/core/envelope.js';
import { encodeEnvelope, type WireMessage } from '../../src/core/wire.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import type { Transport } from '../../src/ports/transport.js';
import { createEmbeddedTransport } from '../../src/transports/embedded/index.js';
import { createRabbitMqTransport, declareTopology, parkingQueueName } from '../../src/transports/rabbitmq/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { testEnv, uniqueName } from './env.js';

export interface TransportHandle {
  readonly transport: Transport;
  /** The group's queue or stream is ready to receive `topic`. */
  prepare(group: string, topic: string): Promise<void>;
  /** Sends raw bytes with an id, bypassing the envelope (poison tests). */
  publishRaw(topic: string, message: WireMessage): Promise<void>;
  close(): Promise<void>;
}

export const transportFactories: Record<'rabbitmq' | 'embedded', () => Promise<TransportHandle>> = {
  async rabbitmq() {
    const exchange = uniqueName('cx');
    const queues: string[] = [];
    let transport = await createRabbitMqTransport({ url: testEnv.amqpUrl, exchange, publishTimeoutMs: 5_000 });
    await transport.waitUntilReady(10_000);
    const amqp = (await import('amqplib')).default;
    const conn = await amqp.connect(testEnv.amqpUrl);
    const ch = await conn.createChannel();
    return {
      get transport() {
        return transport;
      },
      async prepare(group, topic) {
        // As the group's subscription declares it: quorum, with its dead-letter parking queue.
        await declareTopology(ch, {
          queues: [{ name: group }],
          bindings: [{ exchange, queue: group, pattern: topic }],
        });
        queues.push(group, parkingQueueName(group));
      },
      publishRaw: (topic, message) => transport.publish({ topic, message }),
      async close() {
        await transport.close();
        for (const q of queues) await ch.deleteQueue(q).catch(() => undefined);
        await ch.deleteExchange(exchange).catch(() => undefined);
        await conn.close();
        transport = undefined as never;
      },
    };
  },
  async embedded() {
    const dir = mkdtempSync(join(tmpdir(), 'surety-log-'));
    const transport = await createEmbeddedTransport({ path: join(dir, 'log.sqlite'), pollIntervalMs: 50 });
    return {
      transport,
      prepare: async () => undefined,
      publishRaw: (topic, message) => transport.publish({ topic, message }),
      async close() {
        await transport.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** A business table in the fixture's schema or prefix, with dialect-correct placeholders. */
export async function effectsTable(f: StoreFixture) {
  const store = f.store as unknown as ConsumerStore & StoreFixture['store'];
  const table = store.outbox.outboxTable.replace(/outbox/, 'effects');
  const p = (n: number) => (store.dialect === 'postgres' ? `$${n}` : '?');
  await store.transaction((tx) =>
    tx.query(
      `CREATE TABLE ${table} (message_id VARCHAR(64) NOT NULL, group_name VARCHAR(100) NOT NULL, note VARCHAR(200) NOT NULL)`,
    ),
  );
  return {
    table,
    insert: (tx: SqlExecutor, messageId: string, group: string, note: string) =>
      tx.query(`INSERT INTO ${table} (message_id, group_name, note) VALUES (${p(1)}, ${p(2)}, ${p(3)})`, [
        messageId,
        group,
        note,
      ]),
    async rows(): Promise<{ message_id: string; note: string }[]> {
      return (
        await store.transaction((tx) =>
          tx.query<{ message_id: string; note: string }>(`SELECT message_id, note FROM ${table}`),
        )
      ).rows;
    },
    placeholder: p,
  };
}

export type Effects = Awaited<ReturnType<typeof effectsTable>>;

/** Runs `test` against a fresh store from `makeStore` with an effects table, torn down after. */
export async function withEffects(
  makeStore: (label: string) => Promise<StoreFixture>,
  label: string,
  test: (store: ConsumerStore, effects: Effects) => Promise<void>,
): Promise<void> {
  const f = await makeStore(label);
  try {
    await test(f.store as unknown as ConsumerStore, await effectsTable(f));
  } finally {
    await f.teardown();
  }
}

export function wire<P>(input: MessageInput<P>): WireMessage {
  return encodeEnvelope(createEnvelope(input));
}
