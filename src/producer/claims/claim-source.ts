import type { OutboxRow } from '../../ports/outbox-store.js';

/** What one claim took, until it is published or let go. */
export interface Claim {
  readonly count: number;
  /** Starts publishing what was claimed; the claim source settles the outcomes. */
  dispatch(): void;
  /** Lets the claim go unpublished (stopping). */
  release(): Promise<void>;
}

/**
 * One way of claiming due rows and settling their publish outcomes, chosen once per relay from the
 * store's capabilities: locked claims (row locks of an open transaction) or lease claims.
 */
export interface ClaimSource {
  /** Whether a claim may start now; when not, the relay waits for a batch to settle (`Flight.freed`). */
  admits(): boolean;
  /** Claims up to `limit` due rows at `now`. */
  next(limit: number, now: number): Promise<Claim>;
  /** Publishes in flight, for a stop to await. */
  unsettled(): Promise<void>[];
  /** Writes the outcomes already known. Never rejects. */
  settle(): Promise<void>;
  /** Lets go of the rows still held unsettled: a stop past its deadline. Never rejects. */
  release(): Promise<void>;
  /** What a stop past its deadline leaves behind, for its warning. */
  readonly abandoned: string;
}

/** A publish's outcome: undefined when the broker confirmed it. */
export type PublishOutcome = { readonly cause: unknown } | undefined;

/** Publishes one row and observes its outcome; resolves (never rejects) once the broker decided. */
export type PublishRow = (row: OutboxRow) => Promise<PublishOutcome>;
