import { z } from 'zod';
import { systemClock, type Clock } from '../core/clock.js';
import { describeError } from '../core/errors.js';
import { loggerOption, parseOptions } from '../core/options.js';
import type { Overview } from '../ports/admin-store.js';
import type { AdminService, AdminServiceStore } from './admin-service.js';
import { InvalidInputError } from './admin-errors.js';
import { messageIdSchema, parseInput } from './admin-schemas.js';
import type { JobRunner } from './jobs/job-runner.js';
import { mergeLineage, type MergedLineage } from './lineage-merge.js';
import { mergeOverviews, type MergedOverview } from './overview-merge.js';
import { ReadLimit } from './read-limit.js';
import { SharedRead } from './shared-read.js';
import { askEvery, withTimeout } from './store-fanout.js';

/** How long a readiness probe waits for a database. */
const READY_TIMEOUT_MS = 3_000;

/** One database the console serves: its store, the service acting on it and the runner of its bulk jobs. */
export interface StoreEntry {
  readonly name: string;
  /** `postgres`, `mysql`, `sqlite`, or `unknown` for a store that does not say. */
  readonly dialect: string;
  readonly store: AdminServiceStore;
  readonly service: AdminService;
  readonly jobs: JobRunner;
}

/** A store as the directory serves it: its reads bounded and the polled ones shared. */
export interface ServedStore extends StoreEntry {
  /** Runs one read of the admin API within the store's read limit. Actions are not limited: they are few. */
  read<T>(work: (service: AdminService) => Promise<T>): Promise<T>;
  /** The store's overview, shared by concurrent callers and reused for `overviewTtlMs`. */
  overview(): Promise<Overview>;
  /** Whether the database answers a cheap query (within 3 s), reused for `readinessTtlMs`. */
  ready(): Promise<boolean>;
  /** The semaphore bounding reads (how many run and wait). */
  readonly readLimit: ReadLimit;
}

const optionsSchema = z.object({
  /** How long a merged read (overview, lineage) waits for one store before reporting it unavailable. */
  timeoutMs: z.number().int().min(100).max(600_000).default(10_000),
  /** How long an overview (each store's, and the merged one) is reused; 0 only shares reads in flight. */
  overviewTtlMs: z.number().int().min(0).max(600_000).default(2_000),
  /** How long a readiness answer is reused. */
  readinessTtlMs: z.number().int().min(0).max(600_000).default(1_000),
  /** Admin reads running at once on one store; the rest wait their turn. */
  maxConcurrentReads: z.number().int().min(1).max(64).default(2),
  clock: z.custom<Clock>((v) => typeof (v as Clock | null)?.now === 'function', 'must have now()').default(systemClock),
  logger: loggerOption('surety-admin'),
});

export type StoreDirectoryOptions = z.input<typeof optionsSchema>;

/** What a store says of its dialect, if anything. */
export function dialectOf(store: object): string {
  const dialect = (store as { dialect?: unknown }).dialect;
  return typeof dialect === 'string' ? dialect : 'unknown';
}

/**
 * The stores one console serves, in display order (the first is the default). Resolves the `store`
 * a request names to its entry, and merges the reads that span every store: the overview and a
 * message's lineage, where a failing store is reported rather than failing the answer. Reads on one
 * store run at most `maxConcurrentReads` at a time; the overview and readiness, which consoles and
 * probes poll, are read once for every caller in a short window.
 * @example
 * const billing = directory.get('billing');
 * const page = await billing.read((service) => service.listDeadLetters({ status: ['dead'] }));
 * const { outbox, inbox, unavailable } = await directory.lineage(messageId);
 */
export class StoreDirectory {
  readonly entries: readonly ServedStore[];
  private readonly o: Readonly<z.output<typeof optionsSchema>>;
  private readonly merged: SharedRead<{ overview: MergedOverview; asOf: number }>;
  /** Each store's shared overview read, which the merged one is made of. */
  private readonly overviews = new WeakMap<ServedStore, SharedRead<Overview>>();

  constructor(entries: readonly StoreEntry[], options: StoreDirectoryOptions = {}) {
    if (entries.length === 0) throw new RangeError('a store directory needs at least one store');
    this.o = parseOptions(optionsSchema, options, 'stores');
    this.entries = Object.freeze(entries.map((e) => this.serve(e)));
    this.merged = new SharedRead(() => this.mergeOverviews(), {
      ttlMs: this.o.overviewTtlMs,
      clock: this.o.clock,
      asOf: (m) => m.asOf,
    });
  }

  get names(): string[] {
    return this.entries.map((e) => e.name);
  }

  get default(): ServedStore {
    return this.entries[0]!;
  }

  /** The entry a request names (the default when it names none); an unknown name is a 400 naming the allowed ones. */
  get(name?: string): ServedStore {
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

  /**
   * Every store's overview, merged: sums, the oldest pending time, and items tagged with their store.
   * At most `overviewTtlMs` old: reused until the oldest store answer in it reaches that age.
   */
  async overview(): Promise<MergedOverview> {
    return (await this.merged.get()).overview;
  }

  /** A message's lineage across every store; 404 only when no store knows it and every store answered. */
  async lineage(messageId: string): Promise<MergedLineage> {
    // Checked once here, so a malformed id is a 400 rather than one failure per store.
    const id = parseInput(messageIdSchema, messageId, 'messageId');
    const answers = await this.ask('lineage', (e) => e.read((service) => service.findLineage(id)));
    return mergeLineage(id, answers);
  }

  /** Whether every store's database answers. */
  async ready(): Promise<boolean> {
    return (await Promise.all(this.entries.map((e) => e.ready()))).every(Boolean);
  }

  private async mergeOverviews(): Promise<{ overview: MergedOverview; asOf: number }> {
    let asOf = this.o.clock.now();
    const answers = await this.ask('overview', async (e) => {
      const { at, answer } = this.overviews.get(e)!.stamped();
      try {
        return await answer;
      } finally {
        asOf = Math.min(asOf, at);
      }
    });
    return { overview: mergeOverviews(answers), asOf };
  }

  private serve(entry: StoreEntry): ServedStore {
    const { clock, logger } = this.o;
    const readLimit = new ReadLimit(this.o.maxConcurrentReads);
    const read = <T>(work: (service: AdminService) => Promise<T>) => readLimit.run(() => work(entry.service));
    const overview = new SharedRead(() => read((service) => service.overview()), {
      ttlMs: this.o.overviewTtlMs,
      clock,
    });
    // Readiness is one cheap query, shared: it needs no slot, so busy readers cannot make the server look down.
    const ready = new SharedRead(
      () =>
        withTimeout(entry.store.heartbeats.relays(), READY_TIMEOUT_MS).then(
          () => true,
          (err: unknown) => {
            logger.warn({ store: entry.name, err: describeError(err) }, 'readiness check failed');
            return false;
          },
        ),
      { ttlMs: this.o.readinessTtlMs, clock },
    );
    const served: ServedStore = {
      ...entry,
      readLimit,
      read,
      overview: () => overview.get(),
      ready: () => ready.get(),
    };
    this.overviews.set(served, overview);
    return served;
  }

  private ask<T>(what: string, read: (entry: ServedStore) => Promise<T>) {
    return askEvery(this.entries, read, { timeoutMs: this.o.timeoutMs, logger: this.o.logger, what });
  }
}
