/** The parent's side of one broker in the brokers scenario: its names, emptied between runs, removed at the end. */
import type { BrokerArgs } from '../broker-transport.js';
import type { BrokerKind } from '../cpu-usage.js';

export interface Prepared {
  /** What Surety's relay contender is given. */
  readonly transport: BrokerArgs;
  /** What the raw contender is given, besides `messages`. */
  readonly raw: Record<string, unknown>;
}

export interface BrokerTarget {
  readonly kind: BrokerKind;
  /** The broker and what it stores into, for the table. */
  readonly title: string;
  /** The broker's own client: the contender file and how it publishes. */
  readonly raw: { readonly contender: string; readonly label: string };
  /** Empties what the last run left (Kafka: a fresh topic) and says where the next run publishes. */
  prepare(): Promise<Prepared>;
  /** How many messages the broker holds since `prepare`: a run must leave exactly its count. */
  held(): Promise<number>;
  /** Removes everything it created. */
  close(): Promise<void>;
}
