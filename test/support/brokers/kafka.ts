import { silentLogger } from '../../../src/core/logger.js';
import { createKafkaTransport } from '../../../src/transports/kafka/index.js';
import { testEnv } from '../env.js';
import { createTestTopic, deleteTestTopics, kafkaAdmin } from '../kafka-admin.js';
import { cutKafkaConnections } from '../kafka-connections.js';
import type { BrokerUnderTest } from './broker-under-test.js';

/** Within a namespace, topics and groups are named `<ns>.<name>`; the client id is the namespace. */
const named = (ns: string, name: string) => `${ns}.${name}`;

/** Partitions of a prepared topic: several, so that rebalances move some and per-key order matters. */
const PARTITIONS = 3;

const openedHere = new Set<string>();

const kafka: BrokerUnderTest = {
  name: 'kafka',
  async open(ns) {
    const transport = await createKafkaTransport({
      brokers: testEnv.kafkaBrokers,
      clientId: ns,
      topicName: (topic) => named(ns, topic),
      groupId: (group) => named(ns, group),
      // The broker's minimum: a SIGKILLed member's partitions move on after 6 s.
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      logger: silentLogger,
    });
    openedHere.add(ns);
    if (!(await transport.waitUntilReady(30_000))) throw new Error('Kafka transport not ready');
    return transport;
  },
  async prepare(ns, topic) {
    const admin = kafkaAdmin();
    try {
      await createTestTopic(admin, named(ns, topic), PARTITIONS);
    } finally {
      await admin.close();
    }
  },
  async cutConnections(ns) {
    await cutKafkaConnections({ ns, self: openedHere.has(ns) });
  },
  async cleanup(ns) {
    const admin = kafkaAdmin();
    try {
      const mine = (await admin.listTopics()).filter((t) => t.startsWith(`${ns}.`));
      const groups = [...(await admin.listGroups()).keys()].filter((g) => g.startsWith(`${ns}.`));
      await deleteTestTopics(admin, mine, groups);
    } finally {
      await admin.close();
    }
  },
};

export default kafka;
