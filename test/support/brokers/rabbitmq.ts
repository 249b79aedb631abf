import { connect } from 'amqplib';
import { silentLogger } from '../../../src/core/logger.js';
import { createRabbitMqTransport, declareTopology, parkingQueueName } from '../../../src/transports/rabbitmq/index.js';
import { cutRabbitConnections } from '../broker-control.js';
import { testEnv } from '../env.js';
import type { BrokerUnderTest } from './broker-under-test.js';

/** One exchange per namespace, and one quorum queue per group named `<ns>.<group>`. */
const queueOf = (ns: string, group: string) => `${ns}.${group}`;

/** Runs `work` on a channel of a connection of its own (a broker's restart closes any kept one). */
export async function withChannel<T>(
  work: (ch: Awaited<ReturnType<Awaited<ReturnType<typeof connect>>['createChannel']>>) => Promise<T>,
): Promise<T> {
  const connection = await connect(testEnv.amqpUrl);
  connection.on('error', () => undefined);
  try {
    return await work(await connection.createChannel());
  } finally {
    await connection.close().catch(() => undefined);
  }
}

const groups = new Map<string, Set<string>>();

const rabbitmq: BrokerUnderTest = {
  name: 'rabbitmq',
  async open(ns) {
    const transport = await createRabbitMqTransport({
      url: testEnv.amqpUrl,
      exchange: ns,
      connectionName: ns,
      queueForGroup: (group) => queueOf(ns, group),
      logger: silentLogger,
    });
    if (!(await transport.waitUntilReady(30_000))) throw new Error('RabbitMQ transport not ready');
    return transport;
  },
  async prepare(ns, topic, group) {
    const queue = queueOf(ns, group);
    groups.set(ns, (groups.get(ns) ?? new Set()).add(queue));
    await withChannel((ch) =>
      declareTopology(ch, {
        exchanges: [{ name: ns, type: 'topic' }],
        queues: [{ name: queue, type: 'quorum' }],
        bindings: [{ exchange: ns, queue, pattern: topic }],
      }),
    );
  },
  async cutConnections(ns) {
    await cutRabbitConnections(ns);
  },
  async cleanup(ns) {
    await withChannel(async (ch) => {
      for (const queue of groups.get(ns) ?? []) {
        await ch.deleteQueue(queue).catch(() => undefined);
        await ch.deleteQueue(parkingQueueName(queue)).catch(() => undefined);
      }
      await ch.deleteExchange(ns).catch(() => undefined);
    });
  },
};

export default rabbitmq;
