import { z } from 'zod';
import { SuretyError } from '../../core/errors.js';
import { integerIn, listOf, nonEmptyString } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import type { JetStreamManager } from './driver.js';

/** A JetStream stream, always on file storage: what it stores and how it dedupes. */
export interface StreamSpec {
  /** Stream name: no spaces, `.`, `*` or `>`. */
  readonly name: string;
  /** Subjects it stores, wildcards allowed (`orders.>`). */
  readonly subjects: readonly string[];
  /** Copies in a cluster (1 to 5). Default 1; the doctor warns about 1 outside tests. */
  readonly numReplicas?: number;
  /** A resend with the same message id within this window is stored once. Default 120000 (2 min). */
  readonly duplicateWindowMs?: number;
  /** Messages older than this are discarded; 0 keeps them. Default 0. */
  readonly maxAgeMs?: number;
}

export interface NatsTopology {
  readonly streams?: readonly StreamSpec[];
}

export interface ResolvedStreamSpec {
  readonly name: string;
  readonly subjects: readonly string[];
  readonly numReplicas: number;
  readonly duplicateWindowMs: number;
  readonly maxAgeMs: number;
}

export interface ResolvedNatsTopology {
  readonly streams: readonly ResolvedStreamSpec[];
}

const NS_PER_MS = 1_000_000;

const streamSchema = z.object(
  {
    name: nonEmptyString().regex(/^[^\s.*>/\\]+$/, { error: 'must be a stream name without spaces, ".", "*" or ">"' }),
    subjects: listOf(nonEmptyString()).min(1, { error: 'must list at least one subject' }),
    numReplicas: integerIn(1, 5).default(1),
    duplicateWindowMs: integerIn(1, 7 * 24 * 3_600_000).default(120_000),
    maxAgeMs: integerIn(0).default(0),
  },
  { error: 'must be an object with "name" and "subjects"' },
);

export const topologySchema = z.object(
  { streams: listOf(streamSchema).default([]) },
  { error: 'must be an object with "streams"' },
);

/** The stream configuration Surety asks for: file storage, limits retention, deduplication. */
export function streamConfig(spec: ResolvedStreamSpec) {
  return {
    name: spec.name,
    subjects: [...spec.subjects],
    storage: 'file' as const,
    retention: 'limits' as const,
    num_replicas: spec.numReplicas,
    duplicate_window: spec.duplicateWindowMs * NS_PER_MS,
    max_age: spec.maxAgeMs * NS_PER_MS,
  };
}

/**
 * Creates each stream, or updates one that exists to these settings (storage cannot change: a
 * memory stream of that name is refused by the server, with its reason).
 * @example
 * await declareTopology(await jetstreamManager(nc), { streams: [{ name: 'orders', subjects: ['orders.>'] }] });
 */
export async function declareTopology(jsm: JetStreamManager, topology: NatsTopology): Promise<void> {
  const { streams } = parseOptions(topologySchema, topology, 'topology');
  for (const spec of streams) {
    const config = streamConfig(spec);
    const existing = await jsm.streams.info(spec.name).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (existing) await jsm.streams.update(spec.name, config);
    else await jsm.streams.add(config);
  }
}

/** Settings of a group's durable pull consumer. */
export interface GroupConsumer {
  readonly stream: string;
  readonly durable: string;
  readonly filterSubjects: readonly string[];
  readonly ackWaitMs: number;
  readonly maxDeliver: number;
  readonly maxAckPending: number;
}

/** Creates the group's durable consumer, or brings an existing one's editable settings to these. */
export async function ensureGroupConsumer(jsm: JetStreamManager, c: GroupConsumer): Promise<void> {
  const editable = {
    ack_wait: c.ackWaitMs * NS_PER_MS,
    max_deliver: c.maxDeliver,
    max_ack_pending: c.maxAckPending,
  };
  // NATS 2.9 knows filter_subject only; several subjects need filter_subjects (2.10).
  const filter =
    c.filterSubjects.length === 1
      ? { filter_subject: c.filterSubjects[0] }
      : { filter_subjects: [...c.filterSubjects] };
  const existing = await jsm.consumers.info(c.stream, c.durable).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
  if (!existing) {
    await jsm.consumers.add(c.stream, {
      durable_name: c.durable,
      ack_policy: 'explicit' as never,
      deliver_policy: 'all' as never,
      ...filter,
      ...editable,
    });
    return;
  }
  const cfg = existing.config;
  const had = cfg.filter_subjects?.length ? cfg.filter_subjects : cfg.filter_subject ? [cfg.filter_subject] : [];
  if ([...had].sort().join(' ') !== [...c.filterSubjects].sort().join(' '))
    throw new SuretyError(
      'SURETY_INVALID_OPTION',
      `the consumer "${c.durable}" of stream "${c.stream}" reads ${had.join(', ') || 'every subject'}, not ` +
        `${c.filterSubjects.join(', ')}: subscribe a group to the same topics each time, or give it another consumer (consumerForGroup)`,
    );
  if (cfg.ack_wait !== editable.ack_wait || cfg.max_deliver !== c.maxDeliver || cfg.max_ack_pending !== c.maxAckPending)
    await jsm.consumers.update(c.stream, c.durable, editable);
}

/** JetStream's "stream not found" / "consumer not found" API errors. */
export function isNotFound(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'StreamNotFoundError' || name === 'ConsumerNotFoundError';
}
