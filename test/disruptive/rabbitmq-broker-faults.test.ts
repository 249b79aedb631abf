import {
  createRabbitMqTransport,
  declareTopology,
  parkingQueueName,
  type RabbitMqTransport,
} from '../../src/transports/rabbitmq/index.js';
import { runBrokerFaultConformance } from '../conformance/transport-suite.js';
import { startRabbit, stopRabbit } from '../support/broker-control.js';
import { withChannel } from '../support/brokers/rabbitmq.js';
import { testEnv, uniqueName } from '../support/env.js';

runBrokerFaultConformance('rabbitmq', async () => {
  const exchange = uniqueName('faults');
  const queues = new Set<string>();
  const transport: RabbitMqTransport = await createRabbitMqTransport({
    url: testEnv.amqpUrl,
    exchange,
    queueForGroup: (group, topic) => `${topic}.${group}`,
    connectionName: exchange,
  });
  if (!(await transport.waitUntilReady(10_000))) throw new Error('RabbitMQ transport not ready');
  return {
    transport,
    uniqueTopic: (label) => uniqueName(label),
    prepareTopic: async (topic, group) => {
      const queue = `${topic}.${group}`;
      queues.add(queue);
      await withChannel((ch) =>
        declareTopology(ch, { queues: [{ name: queue }], bindings: [{ exchange, queue, pattern: topic }] }),
      );
    },
    stopBroker: stopRabbit,
    startBroker: startRabbit,
    teardown: async () => {
      await transport.close();
      await withChannel(async (ch) => {
        for (const queue of queues) {
          await ch.deleteQueue(queue);
          await ch.deleteQueue(parkingQueueName(queue));
        }
        await ch.deleteExchange(exchange);
      });
    },
  };
});
