import { DriverMissingError } from '../../core/errors.js';

/*
 * The few @platformatic/kafka shapes this adapter uses, declared structurally (as Kysely does) so
 * that the public declarations never import the client, which stays an optional peer dependency.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- listeners mirror the client's EventEmitter signatures */
export interface KafkaEmitter {
  on(event: string, listener: (...args: any[]) => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface KafkaClientOptions {
  readonly clientId: string;
  readonly bootstrapBrokers: string[];
  readonly timeout?: number;
  readonly connectTimeout?: number;
  readonly retries?: number;
  readonly retryDelay?: number;
  readonly autocreateTopics?: boolean;
}

export interface KafkaRecordOut {
  readonly topic: string;
  readonly key?: Buffer;
  readonly value: Buffer;
  readonly headers: Map<Buffer, Buffer>;
}

export interface KafkaProducer extends KafkaEmitter {
  send(options: { messages: KafkaRecordOut[] }): Promise<unknown>;
  metadata(options: { topics: string[] }): Promise<unknown>;
  close(force?: boolean): Promise<void>;
}

export interface KafkaRecordIn {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly key: Buffer | null | undefined;
  readonly value: Buffer | null | undefined;
  readonly headers: Map<Buffer, Buffer>;
}

export interface KafkaAssignment {
  readonly topic: string;
  readonly partitions: number[];
}

export interface KafkaMessagesStream extends KafkaEmitter {
  pause(): unknown;
  resume(): unknown;
  close(): Promise<void>;
}

export interface KafkaCommitOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly leaderEpoch: number;
}

export interface KafkaConsumer extends KafkaEmitter {
  readonly assignments: KafkaAssignment[] | null;
  consume(options: {
    topics: string[];
    mode: 'committed';
    fallbackMode: 'earliest';
    autocommit: false;
    maxWaitTime?: number;
  }): Promise<KafkaMessagesStream>;
  commit(options: { offsets: KafkaCommitOffset[] }): Promise<void>;
  getLag(options: { topics: string[] }): Promise<Map<string, bigint[]>>;
  listCommittedOffsets(options: { topics: KafkaAssignment[] }): Promise<Map<string, bigint[]>>;
  close(force?: boolean): Promise<void>;
}

export interface KafkaConsumerOptions extends KafkaClientOptions {
  readonly groupId: string;
  readonly autocommit: false;
  readonly sessionTimeout: number;
  readonly heartbeatInterval: number;
  readonly rebalanceTimeout: number;
}

export interface KafkaTopicConfig {
  readonly name: string;
  readonly value: string;
}

export interface KafkaAdmin {
  listTopics(options?: { includeInternals?: boolean }): Promise<string[]>;
  createTopics(options: {
    topics: string[];
    partitions: number;
    replicas: number;
    configs?: KafkaTopicConfig[];
  }): Promise<unknown>;
  deleteTopics(options: { topics: string[] }): Promise<void>;
  metadata(options: { topics: string[] }): Promise<{
    topics: Map<
      string,
      { partitionsCount: number; partitions: readonly { leader: number; replicas: number[]; isr: number[] }[] }
    >;
  }>;
  listGroups(): Promise<Map<string, unknown>>;
  describeGroups(options: { groups: string[] }): Promise<Map<string, { state: string; members: Map<string, unknown> }>>;
  listConsumerGroupOffsets(options: {
    groups: string[];
  }): Promise<
    { groupId: string; topics: { name: string; partitions: { partitionIndex: number; committedOffset: bigint }[] }[] }[]
  >;
  listOffsets(options: {
    topics: { name: string; partitions: { partitionIndex: number; timestamp: bigint }[] }[];
  }): Promise<{ name: string; partitions: { partitionIndex: number; offset: bigint }[] }[]>;
  describeConfigs(options: {
    resources: { resourceType: number; resourceName: string; configurationKeys?: string[] }[];
  }): Promise<{ resourceName: string; configs: { name: string; value: string | null }[] }[]>;
  close(): Promise<void>;
}

export interface KafkaDriver {
  Producer: new (options: KafkaClientOptions & { idempotent: true; acks: -1 }) => KafkaProducer;
  Consumer: new (options: KafkaConsumerOptions) => KafkaConsumer;
  Admin: new (options: KafkaClientOptions) => KafkaAdmin;
}

/**
 * Imports @platformatic/kafka on first use so that applications without Kafka need not install it.
 * `importer` exists for tests.
 */
export async function loadKafkaClient(
  importer: () => Promise<unknown> = () => import('@platformatic/kafka'),
): Promise<KafkaDriver> {
  try {
    return (await importer()) as KafkaDriver;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new DriverMissingError('@platformatic/kafka', { cause: err });
    throw err;
  }
}
