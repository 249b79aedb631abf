import { silentLogger } from '../../src/core/logger.js';
import { createKafkaTransport, type KafkaTransport } from '../../src/transports/kafka/index.js';
import { runTransportConformance } from '../conformance/transport-suite.js';
import { createTestTopic, deleteTestTopics, kafkaAdmin } from '../support/kafka-admin.js';
import { testEnv, uniqueName } from '../support/env.js';

/*
 * Checkpoints are per partition: an ack on one partition commits past an unsettled record of
 * another. So topics are single-partition, except those of the tests about volume and per-key
 * order, which get four partitions so that keys are really spread.
 */
const partitionsFor = (topic: string) => (/pipelined|per_key/.test(topic) ? 4 : 1);

runTransportConformance(
  'kafka',
  async () => {
    // Groups ('g1', 'g2') repeat across tests: a prefix of this test's own keeps them apart.
    const prefix = uniqueName('conformance');
    const topics = new Set<string>();
    const opened: KafkaTransport[] = [];
    const open = async (): Promise<KafkaTransport> => {
      const transport = await createKafkaTransport({
        brokers: testEnv.kafkaBrokers,
        clientId: prefix,
        groupId: (group) => `${prefix}.${group}`,
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 500,
        logger: silentLogger,
      });
      opened.push(transport);
      if (!(await transport.waitUntilReady(10_000))) throw new Error('Kafka transport not ready');
      return transport;
    };
    const admin = kafkaAdmin();
    return {
      transport: await open(),
      uniqueTopic: (label) => uniqueName(label),
      prepareTopic: async (topic) => {
        topics.add(topic);
        await createTestTopic(admin, topic, partitionsFor(topic));
      },
      openAnother: open,
      teardown: async () => {
        await Promise.all(opened.map((t) => t.close()));
        await deleteTestTopics(admin, topics, [`${prefix}.g1`, `${prefix}.g2`]);
        await admin.close();
      },
    };
  },
  {
    unroutableDetection: true, // a topic that does not exist (auto-creation is off)
    persistent: true,
    redeliveryCount: false, // counted in-process only: a new member cannot know
    checkpoint: true,
    orderedPerTopic: false,
    orderedPerKey: true,
    // A cut connection does not end a member's session: the client reconnects, keeps its partitions
    // and its unsettled records, which it may still ack. Nothing comes again, unlike RabbitMQ, so
    // the suite's cut test does not apply; kafka-faults.test.ts tests the cut for what Kafka does.
    connectionCut: false,
  },
);
