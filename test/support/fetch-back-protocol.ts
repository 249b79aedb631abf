import type { Outcome } from '../../src/consumer/work-item.js';
import type { FetchedState } from '../../src/consumer/fetch-back.js';

/** What a test tells a fetch-back consumer process (test/support/fetch-back-process.ts). */
export type ParentMessage =
  /** Handle this notification; with `hold`, stay in the transaction after applying until released. */
  | { kind: 'handle'; message: { id: string; headers: Record<string, string>; body: string }; hold: boolean }
  /** The producer's answer to fetch `id`. */
  | { kind: 'answer'; id: number; value: FetchedState<{ name: string }> }
  | { kind: 'release' }
  | { kind: 'stop' };

/** What the process reports, in the order it happens. */
export type ChildMessage =
  | { kind: 'ready' }
  /** The handler runs, in its transaction, on this database session (null on SQLite). */
  | { kind: 'started'; session: number | null }
  | { kind: 'fetch'; id: number; key: string }
  /** apply wrote this version (not yet committed). */
  | { kind: 'applied'; version: number }
  | { kind: 'done'; outcomes: Outcome[] }
  | { kind: 'error'; message: string };
