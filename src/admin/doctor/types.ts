import type { BrokerProbe } from '../../ports/broker-probe.js';
import type { AdminStore } from '../../ports/admin-store.js';
import type { DoctorThresholdsInput } from './thresholds.js';

/** The three places a message can be lost, upstream first. */
export type DoctorPlace = 'producer' | 'broker' | 'consumer';
export type DoctorLevel = 'ok' | 'warn' | 'fail';

/** One finding. `facts` holds the figures behind the message, for scripts and the console. */
export interface DoctorCheck {
  /** Stable id, e.g. `producer.pending`, `broker.queue`, `consumer.failing`. */
  readonly id: string;
  readonly place: DoctorPlace;
  readonly level: DoctorLevel;
  readonly message: string;
  readonly facts: Readonly<Record<string, unknown>>;
  /** What to do about it; present on warn and fail. */
  readonly nextStep?: string;
}

/** The one conclusion: the most upstream failure (else warning), and the next step. */
export interface DoctorVerdict {
  /** Null when every check is ok. */
  readonly place: DoctorPlace | null;
  readonly level: DoctorLevel;
  /** e.g. `broker: orders.created has 1,204 ready and 0 consumers — the consumer is down`. */
  readonly message: string;
  readonly nextStep: string;
}

export interface DoctorReport {
  /** The time the report describes (epoch milliseconds). */
  readonly at: number;
  readonly checks: readonly DoctorCheck[];
  readonly verdict: DoctorVerdict;
}

/** What the doctor reads: the read side of the store's admin concern. */
export type DoctorReads = Pick<AdminStore, 'overview' | 'listOutbox' | 'listDeadLetters'>;

/** What the doctor needs of a store. */
export interface DoctorStore {
  readonly admin: DoctorReads;
}

/** Settings the doctor cannot read from the database or the broker. */
export interface DoctorFacts {
  /** Whether producers publish persistent (delivery mode 2) messages. Default true. */
  readonly persistentPublishing?: boolean;
  /** The consumers' retry engine. Default `dead-letter-table`. */
  readonly retryStrategy?: 'dead-letter-table' | 'broker';
}

export interface DoctorInput {
  readonly store: DoctorStore;
  /** Omit when there is no broker to check (then only the producer and consumer are checked). */
  readonly probe?: BrokerProbe;
  /**
   * Queues the broker checks look at (the consumers' queues). Empty or omitted: every queue the
   * probe lists, when it can enumerate them (`BrokerProbe.listQueues`).
   */
  readonly knownQueues?: readonly string[];
  readonly facts?: DoctorFacts;
  readonly thresholds?: DoctorThresholdsInput;
  /** The time to judge ages against. Default: now. */
  readonly now?: number;
}
