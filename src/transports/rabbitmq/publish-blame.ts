import type { ChannelRefusal } from './channel-refusal.js';
import type { PendingPublish, Unconfirmed } from './confirm-tracker.js';

/** Who of a refused channel's unconfirmed publishes caused the refusal. */
export interface Blame {
  /** Caused it: they fail with the broker's reply. */
  readonly refused: PendingPublish[];
  /** Did not: republished on the next channel, pipelined. */
  readonly innocent: PendingPublish[];
  /** One of them did, which one is unknown: republished one at a time until the broker refuses one. */
  readonly suspects: PendingPublish[];
}

/**
 * Blames the publishes a closed channel left unconfirmed. A broker handles a channel's publishes in
 * order, closes the channel at the first one it refuses and discards those after it; so the culprit
 * is among `unknown` (after every publish the broker confirmed), never among `processed`. Where the
 * reply names an exchange (404, 403), every unknown publish to it is refused: each would fail alike.
 * A single unknown publish is the culprit. Otherwise they are all suspects. A close that no publish
 * caused blames nobody.
 */
export function assignBlame(refusal: ChannelRefusal, { processed, unknown }: Unconfirmed): Blame {
  if (!refusal.byPublish) return { refused: [], innocent: [...processed, ...unknown], suspects: [] };
  const exchange = refusal.exchange;
  if (exchange !== undefined && unknown.some((p) => p.exchange === exchange)) {
    const refused = unknown.filter((p) => p.exchange === exchange);
    const innocent = [...processed, ...unknown.filter((p) => p.exchange !== exchange)];
    return { refused, innocent, suspects: [] };
  }
  if (unknown.length === 1) return { refused: unknown, innocent: processed, suspects: [] };
  return { refused: [], innocent: processed, suspects: unknown };
}
