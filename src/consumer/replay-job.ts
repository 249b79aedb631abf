import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { describeError } from '../core/errors.js';
import { parseOptions } from '../core/options.js';
import type { DeadLetterRow } from '../ports/consumer-store.js';
import type { WorkItem } from './batch-processor.js';
import { decideRetry } from './consumer-options.js';
import type { Consumer } from './consumer.js';
import { TokenBucket } from './token-bucket.js';

const schema = z.object({
  owner: z.string().min(1).max(64).optional(),
  intervalMs: z.number().int().min(10).max(3_600_000).default(1_000),
  batchSize: z.number().int().min(1).max(10_000).default(100),
  /** Rows replayed in one transaction (each under its own savepoint). */
  concurrency: z.number().int().min(1).max(1_000).default(10),
  /** Upper bound on replays per second, so a downstream that is still down never sees a storm. */
  ratePerSecond: z.number().positive().max(1_000_000).default(100),
  leaseMs: z.number().int().min(100).max(86_400_000).default(60_000),
});

export type ReplayJobOptions = z.input<typeof schema>;

/**
 * Replays due dead letters through the consumer's own idempotent path. Rows are claimed by
 * compare-and-set (pending -> replaying with a lease), so of several replayers exactly one takes a
 * row; a replayer that dies leaves its rows to be claimed again when the lease expires.
 * @example
 * const replay = new ReplayJob(consumer, { ratePerSecond: 20 });
 * replay.start();
 */
export class ReplayJob {
  readonly owner: string;
  private readonly o: Readonly<z.output<typeof schema>>;
  private readonly bucket: TokenBucket;
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
  }

  start(): void {
    this.stopped = false;
    if (this.timer || this.running) return;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.runOnce()
        .catch((err) =>
          this.consumer.options.logger.warn({ err: describeError(err) }, 'replay pass failed; will retry'),
        )
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.o.intervalMs);
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
    const { store, clock, group } = this.consumer.options;
    const rows = await store.claimDue({
      owner: this.owner,
      group,
      now: clock.now(),
      limit: this.o.batchSize,
      leaseMs: this.o.leaseMs,
    });
    let resolved = 0;
    for (let i = 0; i < rows.length && !this.stopped; i += this.o.concurrency) {
      const chunk = rows.slice(i, i + this.o.concurrency);
      await this.bucket.take(chunk.length);
      resolved += await this.replayChunk(chunk);
    }
    return resolved;
  }

  private async replayChunk(rows: DeadLetterRow[]): Promise<number> {
    const { store, clock, retry, logger } = this.consumer.options;
    const outcomes = await this.consumer.processor.process(rows.map(toWorkItem));
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
      if (await store.reschedule({ id: row.id, owner: this.owner, attempts, decision, error, now })) {
        if (decision.status === 'dead') this.consumer.notifyDead(row.messageId, attempts, error);
        logger.warn(
          { messageId: row.messageId, attempts, nextRetryAt: decision.nextRetryAt, reason: error },
          'replay failed',
        );
      }
    }
    return store.markResolvedMany(done, this.owner, clock.now());
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
