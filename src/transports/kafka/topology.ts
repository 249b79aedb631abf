import { z } from 'zod';
import { integerIn, listOf, nonEmptyString, recordOption } from '../../core/option-schemas.js';
import type { KafkaAdmin } from './driver.js';

/** A topic the transport creates when it is missing. Existing topics are left as they are. */
export interface TopicSpec {
  readonly name: string;
  /** Default 1. Per-key order holds within a partition, so more partitions spread keys. */
  readonly partitions?: number;
  /** Default 1 (tests); production wants 3. */
  readonly replicationFactor?: number;
  /** `min.insync.replicas`: with acks=all, fewer live replicas refuse writes. Default: the broker's. */
  readonly minInsyncReplicas?: number;
  /** Further topic configs, e.g. `{ 'retention.ms': '604800000' }`. */
  readonly configs?: Readonly<Record<string, string>>;
}

export interface KafkaTopology {
  readonly topics?: readonly TopicSpec[];
}

export interface ResolvedTopicSpec {
  readonly name: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly configs: Readonly<Record<string, string>>;
}

export interface ResolvedKafkaTopology {
  readonly topics: readonly ResolvedTopicSpec[];
}

const topicSchema = z
  .object(
    {
      name: nonEmptyString(),
      partitions: integerIn(1, 100_000).default(1),
      replicationFactor: integerIn(1, 32_767).default(1),
      minInsyncReplicas: integerIn(1, 32_767).optional(),
      configs: recordOption().optional(),
    },
    { error: 'must be an object with at least "name"' },
  )
  .refine((t) => t.minInsyncReplicas === undefined || t.minInsyncReplicas <= t.replicationFactor, {
    error: 'minInsyncReplicas must not exceed replicationFactor (every write would be refused)',
    path: ['minInsyncReplicas'],
  })
  .transform(({ minInsyncReplicas, configs, ...t }) => {
    const all: Record<string, string> = {};
    for (const [k, v] of Object.entries(configs ?? {})) all[k] = String(v);
    if (minInsyncReplicas !== undefined) all['min.insync.replicas'] = String(minInsyncReplicas);
    return Object.freeze({ ...t, configs: Object.freeze(all) });
  });

export const topologySchema = z
  .object({ topics: listOf(topicSchema).default([]) }, { error: 'must be an object with "topics"' })
  .transform((t) => Object.freeze({ topics: Object.freeze(t.topics) }));

/** The broker's error code for "topic already exists" (36), from a create that lost a race. */
const TOPIC_ALREADY_EXISTS = 'TOPIC_ALREADY_EXISTS';

/**
 * Creates each missing topic with its partitions, replication factor and configs. Idempotent and
 * safe from several processes at once: a topic created meanwhile by another counts as created.
 */
export async function declareTopics(admin: KafkaAdmin, topology: ResolvedKafkaTopology): Promise<void> {
  if (topology.topics.length === 0) return;
  const existing = new Set(await admin.listTopics());
  for (const topic of topology.topics) {
    if (existing.has(topic.name)) continue;
    try {
      await admin.createTopics({
        topics: [topic.name],
        partitions: topic.partitions,
        replicas: topic.replicationFactor,
        configs: Object.entries(topic.configs).map(([name, value]) => ({ name, value })),
      });
    } catch (err) {
      if (!hasApiId(err, TOPIC_ALREADY_EXISTS)) throw err;
    }
  }
}

/** Whether a client error, or one it aggregates, carries the broker error `apiId`. */
export function hasApiId(err: unknown, apiId: string, depth = 6): boolean {
  if (depth < 0 || err === null || typeof err !== 'object') return false;
  if ((err as { apiId?: unknown }).apiId === apiId) return true;
  const nested = (err as { errors?: unknown }).errors;
  if (Array.isArray(nested) && nested.some((e) => hasApiId(e, apiId, depth - 1))) return true;
  return hasApiId((err as { cause?: unknown }).cause, apiId, depth - 1);
}
