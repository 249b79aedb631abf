import type { Logger } from '../../core/logger.js';
import type { OutboxRelayStore, OutboxRow } from '../../ports/outbox-store.js';
import type { RelayFailures } from '../relay-failures.js';
import type { ResolvedRelayOptions } from '../relay-options.js';
import type { Claim, ClaimSource, PublishRow } from './claim-source.js';
import type { Flight } from './flight.js';
import { LeaseWriteBack } from './lease-write-back.js';

/**
 * Claims rows by writing a lease on them (MySQL, SQLite, and PostgreSQL with `lockedClaims: false`):
 * a relay that dies loses its claims when the lease ends. Rows are published one by one and their
 * outcomes written back in batches as they come (see LeaseWriteBack).
 */
export class LeaseClaims implements ClaimSource {
  readonly abandoned = 'relay stopped with publishes unconfirmed; their leases will expire';
  private readonly publishes = new Set<Promise<void>>();
  private readonly writeBack: LeaseWriteBack;

  constructor(
    private readonly store: OutboxRelayStore,
    private readonly o: ResolvedRelayOptions,
    private readonly flight: Flight,
    private readonly publish: PublishRow,
    failures: RelayFailures,
    log: Logger,
    relay: { wake(): void; running(): boolean },
  ) {
    this.writeBack = new LeaseWriteBack(store, o, failures, log, {
      wake: () => relay.wake(),
      givenUp: () => !relay.running() && flight.rows === 0,
    });
  }

  admits(): boolean {
    return true;
  }

  async next(limit: number, now: number): Promise<Claim> {
    const o = this.o;
    const rows = await this.store.claim({ owner: o.relayId, limit, now, leaseMs: o.leaseMs, ordered: o.ordered });
    return {
      count: rows.length,
      dispatch: () => rows.forEach((row) => this.start(row)),
      release: async () => {
        await this.store.release(
          o.relayId,
          rows.map((r) => r.seq),
          o.clock.now(),
        );
      },
    };
  }

  unsettled(): Promise<void>[] {
    return [...this.publishes];
  }

  settle(): Promise<void> {
    return this.writeBack.settle();
  }

  async release(): Promise<void> {
    // Nothing held open: unsettled rows fall due again when their lease ends.
  }

  private start(row: OutboxRow): void {
    this.flight.took(1);
    const work = this.publish(row)
      .then((failed) => {
        if (failed) this.writeBack.failed(row, failed.cause);
        else this.writeBack.confirmed(row.seq);
      })
      .finally(() => {
        this.publishes.delete(work);
        this.flight.done();
      });
    this.publishes.add(work);
  }
}
