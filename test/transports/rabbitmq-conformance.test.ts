import { connect } from 'amqplib';
import {
  createRabbitMqTransport,
  declareTopology,
  parkingQueueName,
  type RabbitMqTransport,
} from '../../src/transports/rabbitmq/index.js';
import { runTransportConformance } from '../conformance/transport-suite.js';
import { cutRabbitConnections } from '../support/broker-control.js';
import { testEnv, uniqueName } from '../support/env.js';

runTransportConformance(
  'rabbitmq',
  async () => {
    // Groups ('g1', 'g2') repeat across tests, topics do not: one queue per topic and group.
    const exchange = uniqueName('conformance');
    const queueForGroup = (group: string, topic: string): string => `${topic}.${group}`;
    const queues = new Set<string>();
    const opened: RabbitMqTransport[] = [];
    const open = async (): Promise<RabbitMqTransport> => {
      const transport = await createRabbitMqTransport({
        url: testEnv.amqpUrl,
        exchange,
        queueForGroup,
        connectionName: exchange,
      });
      opened.push(transport);
      if (!(await transport.waitUntilReady(10_000))) throw new Error('RabbitMQ transport not ready');
      return transport;
    };
    const admin = await connect(testEnv.amqpUrl);
    admin.on('error', () => {});
    const ch = await admin.createChannel();
    return {
      transport: await open(),
      uniqueTopic: (label) => uniqueName(label),
      prepareTopic: async (topic, group) => {
        const queue = queueForGroup(group, topic);
        queues.add(queue);
        await declareTopology(ch, { queues: [{ name: queue }], bindings: [{ exchange, queue, pattern: topic }] });
      },
      openAnother: open,
      cutConnections: async () => {
        if ((await cutRabbitConnections(exchange)) === 0) throw new Error('no connection to cut');
      },
      teardown: async () => {
        await Promise.all(opened.map((t) => t.close()));
        for (const queue of queues) {
          await ch.deleteQueue(queue);
          await ch.deleteQueue(parkingQueueName(queue));
        }
        await ch.deleteExchange(exchange);
        await admin.close();
      },
    };
  },
  {
    unroutableDetection: true,
    persistent: true,
    redeliveryCount: true,
    checkpoint: false,
    orderedPerTopic: true,
    connectionCut: true,
  },
);
