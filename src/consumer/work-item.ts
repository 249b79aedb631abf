import type { WireMessage } from '../core/wire.js';
import type { RecordedFailure } from '../ports/consumer-store.js';
import type { DeliveryExhausted } from '../ports/transport.js';

/** One message to handle: a broker delivery or a dead letter being replayed. */
export interface WorkItem {
  readonly message: WireMessage;
  readonly topic: string;
  readonly replay: boolean;
  /** The broker gave up on it: record it as a dead letter, never run the handler. */
  readonly exhausted?: DeliveryExhausted;
}

export type Outcome =
  | { readonly kind: 'handled' }
  | { readonly kind: 'duplicate' }
  /** Dead-letter engine: the failure is recorded in the same committed transaction. */
  | { readonly kind: 'recorded'; readonly failure: RecordedFailure; readonly error: string }
  /** A replay failed (the replay job reschedules it), or the broker engine must redeliver. */
  | { readonly kind: 'failed'; readonly error: string; readonly permanent: boolean };
