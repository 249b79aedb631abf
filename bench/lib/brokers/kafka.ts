/**
 * Kafka: a topic per run (one partition, replication factor 1: the test broker is one node), created
 * before the run because the broker creates none by itself, and deleted after it. A fresh topic
 * rather than emptying one: Kafka cannot truncate a topic in place.
 */
import { Admin } from '@platformatic/kafka';
import { KAFKA_BROKERS } from '../config.js';
import type { BrokerTarget } from './target.js';

export async function kafkaTarget(tag: string): Promise<BrokerTarget> {
  const admin = new Admin({ clientId: 'bench-admin', bootstrapBrokers: [...KAFKA_BROKERS] });
  let runs = 0;
  let topic: string | undefined;
  const drop = async () => {
    if (topic) await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    topic = undefined;
  };
  return {
    kind: 'kafka',
    title: 'Kafka, acks=all, idempotent',
    raw: { contender: 'raw-kafka-publisher', label: '@platformatic/kafka, batches of 500, one at a time' },
    async prepare() {
      await drop();
      topic = `${tag}_${++runs}`;
      await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
      return { transport: { broker: 'kafka', brokers: KAFKA_BROKERS, topic }, raw: { brokers: KAFKA_BROKERS, topic } };
    },
    async held() {
      const offsets = await admin.listOffsets({
        topics: [{ name: topic!, partitions: [{ partitionIndex: 0, timestamp: -1n }] }],
      });
      return Number(offsets[0]!.partitions[0]!.offset);
    },
    async close() {
      await drop();
      await admin.close();
    },
  };
}
