import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { describeError } from '../core/errors.js';
import { parseOptions } from '../core/options.js';
import type { DeadLetterRow } from '../ports/consumer-store.js';
import type { Outcome, WorkItem } from './batch-processor.js';
import { decideRetry } from './consumer-options.js';
import type { Consumer } from './consumer.js';
import { TokenBucket } from './token-bucket.js';

const schema = z.object({
  owner: z.string().min(1).max(64).optional(),
  /** The wait after a pass that found fewer due rows than it may claim; while rows are due, passes run back to back. */
  intervalMs: z.number().int().min(10).max(3_600_000).default(1_000),
  /** Rows claimed at once. Default: one second's worth at `ratePerSecond`, from `concurrency` to 1,000. */
  batchSize: z.number().int().min(1).max(10_000).optional(),
  /** Rows replayed in one transaction (each under its own savepoint). Default: a 25th of the rate, 10 to 200. */
  concurrency: z.number().int().min(1).max(1_000).optional(),
  /** Upper bound on replays per second, so a downstream that is still down never sees a storm. */
  ratePerSecond: z.number().positive().max(1_000_000).default(100),
  leaseMs: z.number().int().min(100).max(86_400_000).default(60_000),
});

/** Chunks whose rows are being marked resolved while the next chunk's handlers run. */
const MAX_SETTLING = 4;

/** How many rows a pass claims and how many it replays per transaction. */
interface Sizes {
  readonly claim: number;
  readonly chunk: number;
}

/**
 * Sizes from the rate: a claim holds about a second's worth (so the bucket, not the claim, sets the
 * pace), but never more than half a lease's worth: claimed rows wait their turn under the lease, and
 * one that outlived it would be claimed again by another replayer.
 */
function sizesFor(o: Readonly<z.output<typeof schema>>): Sizes {
  const rate = o.ratePerSecond;
  const chunk = o.concurrency ?? Math.min(200, Math.max(10, Math.ceil(rate / 25)));
  const wanted = o.batchSize ?? Math.min(1_000, Math.max(chunk, Math.ceil(rate)));
  const leaseWorth = Math.max(1, Math.floor((rate * o.leaseMs) / 2_000));
  const claim = Math.max(1, Math.min(wanted, leaseWorth));
  return { claim, chunk: Math.min(chunk, claim) };
}

export type ReplayJobOptions = z.input<typeof schema>;

/**
 * Replays due dead letters through the consumer's own idempotent path. Rows are claimed by
 * compare-and-set (pending -> replaying with a lease), so of several replayers exactly one takes a
 * row; a replayer that dies leaves its rows to be claimed again when the lease expires. Once
 * started, it claims again at once while rows are due, and a token bucket holds it to
 * `ratePerSecond`.
 * @example
 * const replay = new ReplayJob(consumer, { ratePerSecond: 20 });
 * replay.start();
 */
export class ReplayJob {
  readonly owner: string;
  private readonly o: Readonly<z.output<typeof schema>>;
  private readonly bucket: TokenBucket;
  private readonly sizes: Sizes;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly consumer: Consumer,
    options: ReplayJobOptions = {},
  ) {
    this.o = parseOptions(schema, options, 'replay');
    this.owner = this.o.owner ?? `replay-${hostname().slice(0, 30)}-${process.pid}-${randomBytes(3).toString('hex')}`;
    // Real time, not the injectable clock: the limit protects a real downstream.
    this.bucket = new TokenBucket(this.o.ratePerSecond, () => performance.now());
    this.sizes = sizesFor(this.o);
  }

  start(): void {
    this.stopped = false;
    if (this.timer || this.running) return;
    const tick = () => {
      this.timer = undefined;
      if (this.stopped) return;
      let more = false;
      this.running = this.pass()
        .then((p) => (more = p.claimed === this.sizes.claim))
        .catch((err) =>
          this.consumer.options.logger.warn({ err: describeError(err) }, 'replay pass failed; will retry'),
        )
        .finally(() => {
          this.running = undefined;
          // A full claim means more rows may be due: the next pass starts now, paced by the bucket alone.
          if (!this.stopped) this.timer = more ? setTimeout(tick, 0) : setTimeout(tick, this.o.intervalMs);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    this.running = undefined;
  }

  /** One pass: claims due rows and replays them. Returns how many were resolved. */
  async runOnce(): Promise<number> {
    return (await this.pass()).resolved;
  }

  private async pass(): Promise<{ claimed: number; resolved: number }> {
    const { store, clock, group } = this.consumer.options;
    const { claim, chunk: size } = this.sizes;
    const rows = await store.deadLetters.claimDue({
      owner: this.owner,
      group,
      now: clock.now(),
      limit: claim,
      leaseMs: this.o.leaseMs,
    });
    let resolved = 0;
    // Marking a chunk's rows resolved (or rescheduled) overlaps the next chunks' handlers: the rows
    // differ, and handlers still run one chunk after another, in claim order.
    const settling: Promise<void>[] = [];
    try {
      for (let i = 0; i < rows.length && !this.stopped; i += size) {
        const chunk = rows.slice(i, i + size);
        await this.bucket.take(chunk.length);
        const outcomes = await this.consumer.processor.process(chunk.map(toWorkItem));
        const settled = this.settle(chunk, outcomes).then((n) => void (resolved += n));
        settled.catch(() => undefined); // awaited below; not unhandled meanwhile
        settling.push(settled);
        if (settling.length >= MAX_SETTLING) await settling.shift();
      }
      await Promise.all(settling);
    } finally {
      await Promise.allSettled(settling);
    }
    return { claimed: rows.length, resolved };
  }

  /** Resolves the rows handled (or found already handled) and reschedules the others. */
  private async settle(rows: readonly DeadLetterRow[], outcomes: readonly Outcome[]): Promise<number> {
    const { store, clock, retry, logger } = this.consumer.options;
    const done: number[] = [];
    for (const [i, row] of rows.entries()) {
      const outcome = outcomes[i]!;
      const now = clock.now();
      if (outcome.kind === 'handled' || outcome.kind === 'duplicate') {
        done.push(row.id);
        continue;
      }
      const error = outcome.error;
      const attempts = row.attempts + 1;
      const permanent = outcome.kind === 'failed' && outcome.permanent;
      const decision =
        permanent || retry.kind !== 'dead-letter-table'
          ? { status: 'dead' as const, nextRetryAt: null }
          : decideRetry(retry, attempts, now);
      if (await store.deadLetters.reschedule({ id: row.id, owner: this.owner, attempts, decision, error, now })) {
        this.consumer.metrics.replayed(decision.status === 'dead' ? 'dead' : 'rescheduled');
        if (decision.status === 'dead') this.consumer.notifyDead(row.messageId, attempts, error);
        logger.warn(
          { messageId: row.messageId, attempts, nextRetryAt: decision.nextRetryAt, reason: error },
          'replay failed',
        );
      }
    }
    const resolved = await store.deadLetters.markResolvedMany(done, this.owner, clock.now());
    this.consumer.metrics.replayed('resolved', resolved);
    return resolved;
  }
}

function toWorkItem(row: DeadLetterRow): WorkItem {
  const headers = { ...row.headers };
  const original = headers['surety-original-id'];
  delete headers['surety-original-id'];
  return {
    message: { id: original ?? row.messageId, headers, body: Buffer.from(row.body, row.bodyEncoding) },
    topic: row.topic,
    replay: true,
  };
}
