/** The doctor's view of Kafka, and the topology helper, against the real broker. */
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import {
  createKafkaQueueProbe,
  createKafkaTransport,
  type KafkaQueueProbe,
  type KafkaTransport,
} from '../../src/transports/kafka/index.js';
import { testMessage } from '../conformance/transport-suite.js';
import { testEnv, uniqueName } from '../support/env.js';
import { deleteTestTopics, kafkaAdmin } from '../support/kafka-admin.js';
import { waitFor } from '../support/wait.js';

describe('kafka probe and topology', () => {
  const topics: string[] = [];
  const groups: string[] = [];
  const closing: (KafkaTransport | KafkaQueueProbe)[] = [];

  afterEach(async () => {
    await Promise.allSettled(closing.splice(0).map((c) => c.close()));
    const admin = kafkaAdmin();
    await deleteTestTopics(admin, topics.splice(0), groups.splice(0));
    await admin.close();
  });

  async function transportWith(topic: string, spec: Record<string, unknown>): Promise<KafkaTransport> {
    topics.push(topic);
    const transport = await createKafkaTransport({
      brokers: testEnv.kafkaBrokers,
      topology: { topics: [{ name: topic, ...spec }] },
      logger: silentLogger,
    });
    closing.push(transport);
    expect(await transport.waitUntilReady(10_000)).toBe(true);
    return transport;
  }

  async function probe(): Promise<KafkaQueueProbe> {
    const p = await createKafkaQueueProbe({ brokers: testEnv.kafkaBrokers });
    closing.push(p);
    return p;
  }

  it('creates the topology topic with its partitions and min.insync.replicas, and flags replication factor 1', async () => {
    const topic = uniqueName('topology');
    await transportWith(topic, {
      partitions: 3,
      replicationFactor: 1,
      minInsyncReplicas: 1,
      configs: { 'retention.ms': '3600000' },
    });
    const admin = kafkaAdmin();
    try {
      const meta = (await admin.metadata({ topics: [topic] })).topics.get(topic)!;
      expect(meta.partitionsCount).toBe(3);
      const [described] = await admin.describeConfigs({
        resources: [
          { resourceType: 2, resourceName: topic, configurationKeys: ['min.insync.replicas', 'retention.ms'] },
        ],
      });
      expect(Object.fromEntries(described!.configs.map((c) => [c.name, c.value]))).toEqual({
        'min.insync.replicas': '1',
        'retention.ms': '3600000',
      });
    } finally {
      await admin.close();
    }
    const risks = await (await probe()).settingRisks(topic);
    expect(risks.map((r) => r.setting)).toEqual(['replication.factor']);
  });

  it('reports a group lag per partition, which falls to zero as the group commits', async () => {
    const topic = uniqueName('lag');
    const group = uniqueName('lag_group');
    groups.push(group);
    const transport = await transportWith(topic, { partitions: 2 });
    const messages = Array.from({ length: 10 }, (_, i) => testMessage(`m${i}`, `k${i}`));
    await Promise.all(messages.map((message) => transport.publish({ topic, message })));

    const p = await probe();
    const before = await p.inspect(`${topic}@${group}`);
    expect(before).toMatchObject({ exists: true, ready: 10, consumers: 0, type: 'log' });
    const partitions = before.arguments!.partitions as { partition: number; committed: number | null; lag: number }[];
    expect(partitions.map((x) => x.partition)).toEqual([0, 1]);
    expect(partitions.reduce((sum, x) => sum + x.lag, 0)).toBe(10);
    expect(partitions.every((x) => x.committed === null)).toBe(true);

    let handled = 0;
    await transport.subscribe({ group, topics: [topic] }, async (d) => {
      handled++;
      await d.ack();
    });
    await waitFor('the lag to reach zero', async () => (await p.inspect(`${topic}@${group}`)).ready === 0, 30_000, 100);
    const after = await p.inspect(`${topic}@${group}`);
    expect(handled).toBe(10);
    expect(after.consumers).toBe(1);
    expect(await p.listQueues!()).toContain(`${topic}@${group}`);
    expect(await p.inspect(`${uniqueName('missing')}@${group}`)).toMatchObject({ exists: false, ready: 0 });
  });
});
