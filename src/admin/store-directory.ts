import { silentLogger, type Logger } from '../core/logger.js';
import type { AdminService, AdminServiceStore } from './admin-service.js';
import { InvalidInputError } from './admin-errors.js';
import { messageIdSchema, parseInput } from './admin-schemas.js';
import type { JobRunner } from './jobs/job-runner.js';
import { mergeLineage, type MergedLineage } from './lineage-merge.js';
import { mergeOverviews, type MergedOverview } from './overview-merge.js';
import { askEvery } from './store-fanout.js';

/** Names given in the `stores` option: a letter, then letters, digits, `_` or `-`; at most 40. */
export const STORE_NAME = /^[a-z][a-z0-9_-]{0,39}$/i;
export const STORE_NAME_RULE = 'must be a store name: a letter, then letters, digits, _ or -, at most 40 characters';

/** The name a single `store` option is served under. */
export const DEFAULT_STORE_NAME = 'default';

/** One database the console serves: its store, the service acting on it and the runner of its bulk jobs. */
export interface StoreEntry {
  readonly name: string;
  /** `postgres`, `mysql`, `sqlite`, or `unknown` for a store that does not say. */
  readonly dialect: string;
  readonly store: AdminServiceStore;
  readonly service: AdminService;
  readonly jobs: JobRunner;
}

export interface StoreDirectoryOptions {
  /** How long a merged read (overview, lineage) waits for one store before reporting it unavailable. */
  readonly timeoutMs?: number;
  readonly logger?: Logger;
}

/** What a store says of its dialect, if anything. */
export function dialectOf(store: object): string {
  const dialect = (store as { dialect?: unknown }).dialect;
  return typeof dialect === 'string' ? dialect : 'unknown';
}

/**
 * The stores one console serves, in display order (the first is the default). Resolves the `store`
 * a request names to its entry, and merges the reads that span every store: the overview and a
 * message's lineage, where a failing store is reported rather than failing the answer.
 * @example
 * const billing = directory.get('billing').service;
 * const { outbox, inbox, unavailable } = await directory.lineage(messageId);
 */
export class StoreDirectory {
  readonly entries: readonly StoreEntry[];
  private readonly timeoutMs: number;
  private readonly logger: Logger;

  constructor(entries: readonly StoreEntry[], options: StoreDirectoryOptions = {}) {
    if (entries.length === 0) throw new RangeError('a store directory needs at least one store');
    this.entries = Object.freeze([...entries]);
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.logger = options.logger ?? silentLogger;
  }

  get names(): string[] {
    return this.entries.map((e) => e.name);
  }

  get default(): StoreEntry {
    return this.entries[0]!;
  }

  /** The entry a request names (the default when it names none); an unknown name is a 400 naming the allowed ones. */
  get(name?: string): StoreEntry {
    if (name === undefined) return this.default;
    const entry = this.entries.find((e) => e.name === name);
    if (entry) return entry;
    const shown = name.length > 40 ? `${name.slice(0, 40)}...` : name;
    throw new InvalidInputError([
      { path: 'query.store', message: `unknown store "${shown}"; allowed: ${this.names.join(', ')}` },
    ]);
  }

  /** Name, dialect and whether it is the default, for each store in display order. */
  list(): { name: string; dialect: string; default: boolean }[] {
    return this.entries.map((e, i) => ({ name: e.name, dialect: e.dialect, default: i === 0 }));
  }

  /** Every store's overview, merged: sums, the oldest pending time, and items tagged with their store. */
  async overview(): Promise<MergedOverview> {
    const answers = await this.ask('overview', (e) => e.service.overview());
    return mergeOverviews(answers);
  }

  /** A message's lineage across every store; 404 only when no store knows it and every store answered. */
  async lineage(messageId: string): Promise<MergedLineage> {
    // Checked once here, so a malformed id is a 400 rather than one failure per store.
    const id = parseInput(messageIdSchema, messageId, 'messageId');
    const answers = await this.ask('lineage', (e) => e.service.findLineage(id));
    return mergeLineage(id, answers);
  }

  private ask<T>(what: string, read: (entry: StoreEntry) => Promise<T>) {
    return askEvery(this.entries, read, { timeoutMs: this.timeoutMs, logger: this.logger, what });
  }
}
