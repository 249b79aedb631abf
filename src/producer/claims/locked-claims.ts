import { describeError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { FailureUpdate, LockedBatch, OutboxRelayStore, OutboxRow } from '../../ports/outbox-store.js';
import type { RelayFailures } from '../relay-failures.js';
import type { ResolvedRelayOptions } from '../relay-options.js';
import type { Claim, ClaimSource, PublishRow } from './claim-source.js';
import type { Flight } from './flight.js';

export type LockingStore = OutboxRelayStore & Required<Pick<OutboxRelayStore, 'claimLocked'>>;

/**
 * Claims a batch as row locks of an open transaction (PostgreSQL): claiming writes nothing. Every row
 * of the batch is published, then all are settled in that transaction at once. Each batch in flight
 * holds one connection until its slowest confirm, so at most `maxLockedBatches` run. With every one
 * taken by small batches (fewer than `batchSize` rows in all), a claim writes leases instead
 * (`overflow`): at a trickle each commit is a batch of one, and a commit would otherwise wait for an
 * earlier one's confirm before it is even claimed. Behind a backlog's full batches it waits instead.
 */
export class LockedClaims implements ClaimSource {
  readonly abandoned = 'relay stopped with publishes unconfirmed; their rows are let go';
  /** Batches in flight, each holding its transaction until its rows are settled. */
  private readonly batches = new Map<Promise<void>, LockedBatch>();
  /** Locked claims still querying: each holds a connection too. */
  private claiming = 0;
  /** Rows of the batches in flight. */
  private lockedRows = 0;

  constructor(
    private readonly overflow: ClaimSource,
    private readonly store: LockingStore,
    private readonly o: ResolvedRelayOptions,
    private readonly flight: Flight,
    private readonly publish: PublishRow,
    private readonly failures: RelayFailures,
    private readonly log: Logger,
    private readonly relay: { wake(): void; running(): boolean },
  ) {}

  admits(): boolean {
    return !this.full() || this.lockedRows < this.o.batchSize;
  }

  async next(limit: number, now: number): Promise<Claim> {
    const o = this.o;
    if (this.full()) return this.overflow.next(limit, now);
    this.claiming++;
    let batch: LockedBatch;
    try {
      batch = await this.store.claimLocked({ limit, now, leaseMs: o.leaseMs, ordered: o.ordered });
    } finally {
      this.claiming--;
    }
    return {
      count: batch.rows.length,
      dispatch: () => {
        if (batch.rows.length === 0) return;
        const run = this.run(batch)
          .catch((err: unknown) => {
            this.log.error({ err: describeError(err) }, 'running a claimed batch failed');
            return batch.release();
          })
          .finally(() => {
            this.batches.delete(run);
            this.lockedRows -= batch.rows.length;
            this.flight.freed.fire();
          });
        this.batches.set(run, batch);
        this.lockedRows += batch.rows.length;
      },
      release: () => batch.release(),
    };
  }

  private full(): boolean {
    return this.batches.size + this.claiming >= this.o.maxLockedBatches;
  }

  unsettled(): Promise<void>[] {
    return [...this.batches.keys(), ...this.overflow.unsettled()];
  }

  /** Batches settle in their own transactions as they complete; overflow outcomes are written back. */
  settle(): Promise<void> {
    return this.overflow.settle();
  }

  async release(): Promise<void> {
    // Bounded by the caller: a connection that stopped answering is ended by the server after leaseMs.
    await Promise.all([...this.batches.values()].map((b) => b.release().catch(() => undefined)));
    await this.overflow.release();
  }

  /** Publishes every row of `batch`, then settles them all in its transaction. Never rejects. */
  private async run(batch: LockedBatch): Promise<void> {
    const o = this.o;
    // The batch's own promise (in `batches`) is what a stop awaits; rows are only counted.
    this.flight.took(batch.rows.length);
    const outcomes = await Promise.all(batch.rows.map((row) => this.publish(row).finally(() => this.flight.done())));
    const sent: number[] = [];
    const failed: { row: OutboxRow; update: FailureUpdate; error: unknown }[] = [];
    batch.rows.forEach((row, i) => {
      const outcome = outcomes[i];
      if (outcome) failed.push({ row, update: this.failures.update(row, outcome.cause), error: outcome.cause });
      else sent.push(row.seq);
    });
    let recorded: ReadonlySet<number>;
    try {
      recorded = new Set(
        await batch.settle(
          sent,
          failed.map((f) => f.update),
          o.clock.now(),
        ),
      );
    } catch (err) {
      await batch.release().catch(() => undefined);
      if (this.relay.running())
        this.log.error(
          { err: describeError(err), rows: batch.rows.length },
          'settling a claimed batch failed; its rows stay pending and will be published again',
        );
      else this.log.warn({ rows: batch.rows.length }, 'a batch let go at stop settled too late; its rows stay pending');
      return;
    }
    // A failure not recorded: the row changed hands after the lock was lost; its new owner reports it.
    for (const f of failed) if (recorded.has(f.row.seq)) await this.failures.report(f.row, f.update, f.error);
    if (o.ordered) this.relay.wake(); // the next row of each key may now be claimable
  }
}
