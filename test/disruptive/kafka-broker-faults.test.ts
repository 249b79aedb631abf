/**
 * The shipped broker-fault suite on a Kafka node of its own (never the shared broker), SIGKILLed
 * and started again on its data: run alone (vitest.disruptive.config.ts).
 */
import { afterAll, beforeAll } from 'vitest';
import { Admin } from '@platformatic/kafka';
import { silentLogger } from '../../src/core/logger.js';
import { createKafkaTransport, type KafkaTransport } from '../../src/transports/kafka/index.js';
import { runBrokerFaultConformance } from '../conformance/transport-suite.js';
import { uniqueName } from '../support/env.js';
import { createTestTopic, deleteTestTopics } from '../support/kafka-admin.js';
import { KafkaCluster } from '../support/kafka-cluster.js';

let cluster: KafkaCluster;

beforeAll(async () => {
  cluster = await KafkaCluster.start(1);
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
});

runBrokerFaultConformance('kafka', async () => {
  const ns = uniqueName('faults');
  const opened: KafkaTransport[] = [];
  const admin = () => new Admin({ clientId: ns, bootstrapBrokers: cluster.addresses, autocreateTopics: false });
  const topics = new Set<string>();
  const transport = await createKafkaTransport({
    brokers: cluster.addresses,
    clientId: ns,
    groupId: (group) => `${ns}.${group}`,
    sessionTimeoutMs: 6_000,
    heartbeatIntervalMs: 500,
    startTimeoutMs: 90_000,
    logger: silentLogger,
  });
  opened.push(transport);
  if (!(await transport.waitUntilReady(30_000))) throw new Error('Kafka transport not ready');
  return {
    transport,
    uniqueTopic: (label) => uniqueName(label),
    prepareTopic: async (topic) => {
      topics.add(topic);
      const a = admin();
      await createTestTopic(a, topic).finally(() => a.close());
    },
    stopBroker: async () => cluster.kill(1),
    startBroker: () => cluster.restart(1),
    teardown: async () => {
      await Promise.all(opened.map((t) => t.close()));
      const a = admin();
      await deleteTestTopics(a, topics, [`${ns}.g1`]).finally(() => a.close());
    },
  };
});
