import { z } from 'zod';
import { integerIn, nonEmptyString } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import type { BrokerProbe, QueueState } from '../../ports/broker-probe.js';
import { loadKafkaClient, type KafkaAdmin, type KafkaDriver } from './driver.js';
import { brokersSchema } from './options.js';
import { topicRisks, type SettingRisk } from './settings-risks.js';

export interface KafkaQueueProbeOptions {
  /** Bootstrap brokers, `host:port`, one or more. */
  readonly brokers: string | readonly string[];
  /** Request timeout. Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Client id shown by the broker. Default `surety-doctor`. */
  readonly clientId?: string;
}

/** The Kafka probe: the port, plus the risky settings of a topic for the doctor. */
export interface KafkaQueueProbe extends BrokerProbe {
  /** Replication factor 1, min.insync.replicas 1, unclean leader election: see {@link topicRisks}. */
  settingRisks(topic: string): Promise<SettingRisk[]>;
}

/** One partition of a group's topic: where the group has committed, where the log ends, the lag. */
export interface PartitionLag {
  readonly partition: number;
  /** Next offset the group reads; null when it has committed nothing on this partition. */
  readonly committed: number | null;
  readonly end: number;
  readonly lag: number;
}

const probeSchema = z.object(
  {
    brokers: brokersSchema,
    timeoutMs: integerIn(1, 2_147_483_647).default(5_000),
    clientId: nonEmptyString().default('surety-doctor'),
  },
  { error: 'must be an object with at least "brokers"' },
);

/** Kafka's "latest offset" timestamp in a ListOffsets request. */
const LATEST = -1n;

/**
 * A read-only {@link BrokerProbe} for Kafka. A queue is one consumer group on one topic, named
 * `<topic>@<group>`: `ready` is the group's lag summed over the partitions, `consumers` the group's
 * members, and `arguments.partitions` the lag of each partition.
 * @example
 * const probe = await createKafkaQueueProbe({ brokers: 'localhost:9092' });
 * const billing = await probe.inspect('order.created@billing'); // { ready: 12, consumers: 2, ... }
 * await probe.close();
 */
export async function createKafkaQueueProbe(
  options: KafkaQueueProbeOptions,
  driver?: KafkaDriver,
): Promise<KafkaQueueProbe> {
  const o = parseOptions(probeSchema, options, '');
  const client = driver ?? (await loadKafkaClient());
  const admin = new client.Admin({
    clientId: o.clientId,
    bootstrapBrokers: [...o.brokers],
    timeout: o.timeoutMs,
    connectTimeout: o.timeoutMs,
    retries: 1,
    autocreateTopics: false,
  });
  return Object.freeze({
    broker: 'kafka',
    address: o.brokers.join(','),
    inspect: (queue: string) => inspect(admin, queue),
    listQueues: () => listQueues(admin),
    settingRisks: (topic: string) => topicRisks(admin, topic),
    close: () => admin.close(),
  });
}

async function inspect(admin: KafkaAdmin, queue: string): Promise<QueueState> {
  const at = queue.lastIndexOf('@');
  const [topic, group] = at > 0 ? [queue.slice(0, at), queue.slice(at + 1)] : [queue, ''];
  const base = { name: queue, unacked: null, durable: true, type: 'log', source: 'log' as const, deliveryLimit: null };
  if (!(await admin.listTopics()).includes(topic))
    return { ...base, exists: false, ready: 0, consumers: 0, arguments: null };
  const partitions = await partitionLag(admin, topic, group);
  const groupInfo = group ? (await admin.describeGroups({ groups: [group] })).get(group) : undefined;
  // The doctor reports each as a warning on the queue (broker.queue-risk).
  const warnings = (await topicRisks(admin, topic)).map((r) => `${r.setting} is ${r.value} on ${r.topic}: ${r.why}`);
  return {
    ...base,
    exists: true,
    ready: partitions.reduce((sum, p) => sum + p.lag, 0),
    consumers: groupInfo?.members.size ?? 0,
    arguments: Object.freeze({ partitions }),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/** Every `<topic>@<group>` pair the cluster's committed offsets name. */
async function listQueues(admin: KafkaAdmin): Promise<string[]> {
  const groups = [...(await admin.listGroups()).keys()];
  if (groups.length === 0) return [];
  const offsets = await admin.listConsumerGroupOffsets({ groups });
  return offsets.flatMap((g) => g.topics.map((t) => `${t.name}@${g.groupId}`)).sort();
}

/** Lag per partition: the log's end minus the group's committed offset (the whole log if none). */
export async function partitionLag(admin: KafkaAdmin, topic: string, group: string): Promise<PartitionLag[]> {
  const meta = (await admin.metadata({ topics: [topic] })).topics.get(topic);
  const indexes = Array.from({ length: meta?.partitionsCount ?? 0 }, (_, i) => i);
  const [ends] = await admin.listOffsets({
    topics: [{ name: topic, partitions: indexes.map((partitionIndex) => ({ partitionIndex, timestamp: LATEST })) }],
  });
  const committed = new Map<number, bigint>();
  if (group) {
    const [offsets] = await admin.listConsumerGroupOffsets({ groups: [group] });
    for (const t of offsets?.topics ?? [])
      if (t.name === topic)
        for (const p of t.partitions) if (p.committedOffset >= 0n) committed.set(p.partitionIndex, p.committedOffset);
  }
  return (ends?.partitions ?? [])
    .map((p) => {
      const at = committed.get(p.partitionIndex);
      const end = Number(p.offset);
      return {
        partition: p.partitionIndex,
        committed: at === undefined ? null : Number(at),
        end,
        lag: end - Number(at ?? 0n),
      };
    })
    .sort((a, b) => a.partition - b.partition);
}
