/**
 * Hot-path plan conformance suite. Every database adapter runs it:
 *
 *   runHotPathPlanConformance('postgres', () => makePostgresPlanFixture());
 *
 * The fixture makes the planner statistics stale the way production does (statistics of the empty
 * tables, then a bulk load the server does not analyze), lays the rows out as {@link PlanLayout}
 * says, and reports what each hot statement touches when run on them. Every operation in
 * {@link HOT_OPERATIONS} must be covered by each dialect: add a statement there and each dialect's
 * test stops compiling until it says how it runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimRequest } from '../../src/ports/outbox-store.js';
import { insertDeadLetterEvents, lockDeadLetters, updateDeadLetters } from '../../src/stores/sql/admin-sql.js';
import type { DeadLetterTransition } from '../../src/stores/sql/dead-letter-transition.js';
import type { TableNames } from '../../src/stores/sql/naming.js';
import type { SqlDialect, Statement } from '../../src/stores/sql/sql-dialect.js';

/** The operations on the relay's, consumer's and replay job's hot paths. */
export const HOT_OPERATIONS = [
  'outbox.add',
  'outbox.add (ordered)',
  'relay.lockedClaim',
  'relay.leaseClaim',
  'relay.markSent',
  'relay.recordFailure',
  'relay.release',
  'relay.purgeSent',
  'consumer.recordInbox',
  'consumer.recordInboxBatch',
  'consumer.recordDeliveryFailure',
  'consumer.purgeInbox',
  'consumer.purgeSettledDeadLetters',
  'replay.claimDue',
  'replay.markResolved',
  'replay.markResolvedMany',
  'replay.reschedule',
] as const;

export type HotOperation = (typeof HOT_OPERATIONS)[number];

/** One statement as the store runs it. */
export interface HotStatement {
  /** Says which statement of the operation this is. */
  readonly label: string;
  readonly text: string;
  readonly values: readonly unknown[];
  /** How many rows the statement is asked to handle (its batch); what it may touch grows with this. */
  readonly rows: number;
  /** PostgreSQL: the store runs it in a transaction of its own with these SET LOCAL settings. */
  readonly settings?: string;
}

/** `s`, as a dialect's statements object builds it for the store, to be checked for `rows` rows of work. */
export function planned(label: string, s: Statement, rows: number, settings?: string): HotStatement {
  return { label, text: s.text, values: s.values, rows, ...(settings === undefined ? {} : { settings }) };
}

/** `op` in the form the dialect is meant to give it (`one` statement or `stepwise`), or the test fails. */
export function inMode<O extends { readonly mode: string }, M extends O['mode']>(
  op: O,
  mode: M,
): Extract<O, { mode: M }> {
  if (op.mode !== mode) throw new Error(`expected the ${mode} form, got ${op.mode}`);
  return op as Extract<O, { mode: M }>;
}

/** What a statement touched on the stale tables; `violations` empty when it stayed within its bounds. */
export interface PlanReport {
  readonly violations: readonly string[];
  /** The plan, shown when a check fails. */
  readonly plan: string;
}

export interface PlanFixture {
  readonly layout: PlanLayout;
  /**
   * Every hot operation's statements, run with parameters from `layout`; a string says why the
   * dialect has no such operation.
   */
  readonly statements: Record<HotOperation, readonly HotStatement[] | string>;
  /** Runs (or explains) the statement on the stale tables, undoing whatever it wrote. */
  examine(statement: HotStatement): Promise<PlanReport>;
  teardown(): Promise<void>;
}

/**
 * Tuples a statement may read for `rows` rows of work: a few per row (its index entries, a
 * probe of another table) and a constant. A plan that filters its way through a table reads
 * every row of it instead.
 */
export const readBudget = (rows: number) => 4 * rows + 200;

/** Sizes of the seeded tables. */
export interface PlanSizes {
  readonly outbox: number;
  readonly inbox: number;
  readonly deadLetters: number;
  readonly attempts: number;
}

const uuidFor = (prefix: string, i: number) => `${prefix}-0000-4000-8000-${String(i).padStart(12, '0')}`;

/**
 * How the seeded rows are laid out; each dialect's seed writes exactly this, and the statements'
 * parameters come from it. Row `i` (1-based) of each table has seq or id `i`; bounds are inclusive.
 *
 * - Outbox: message key `<i>`, sent up to `sentTo` (sent_at = i), dead up to `deadTo`, then pending
 *   and due (next_attempt_at = i), except the rows after `heldFrom`, which `owner` holds until
 *   `leaseEnd`. Every tenth pending row is ordered (key `k<i mod 1000>`, key_seq = i); the others
 *   have their message key as ordering key, as an unordered add gives them. Message id
 *   {@link outboxMessageId}.
 * - Inbox: message `m-<i>` of group `g`, recorded at i.
 * - Dead letters of group `g`, message `dl-<i>`: resolved up to `resolvedTo` and ignored up to
 *   `ignoredTo` (updated_at = i), dead up to `deadTo`, replaying with an expired lease (lease_until
 *   = i, another owner's) up to `expiredTo`, replaying held by `owner` until `leaseEnd` up to
 *   `replayingTo`, then pending and due (next_retry_at = i). One event each.
 * - Attempts: attempt i of outbox row i, at i.
 */
export class PlanLayout {
  /** Rows a relay or replayer claim handles at once. */
  readonly batch = 500;
  /** Rows a retention purge deletes per statement. */
  readonly purgeBatch = 1_000;
  /** Messages a consumer records or a replayer resolves at once. */
  readonly consumerBatch = 100;
  readonly owner = 'plan-owner';
  readonly group = 'g';
  readonly outbox;
  readonly deadLetters;

  constructor(readonly sizes: PlanSizes) {
    const n = sizes.outbox;
    this.outbox = { sentTo: Math.floor(n * 0.2), deadTo: Math.floor(n * 0.25), heldFrom: n - this.batch };
    const d = sizes.deadLetters;
    this.deadLetters = {
      resolvedTo: Math.floor(d * 0.3),
      ignoredTo: Math.floor(d * 0.4),
      deadTo: Math.floor(d * 0.6),
      expiredTo: Math.floor(d * 0.65),
      replayingTo: Math.floor(d * 0.7),
    };
  }

  /** Later than every seeded time. */
  get now(): number {
    return Math.max(this.sizes.outbox, this.sizes.inbox, this.sizes.deadLetters, this.sizes.attempts) + 1;
  }

  get leaseEnd(): number {
    return this.now * 10;
  }

  /** A relay's claim of a batch, by another owner than the one holding the rows after `heldFrom`. */
  claimRequest(ordered: boolean): ClaimRequest {
    return { owner: 'relay-2', limit: this.batch, now: this.now, leaseMs: this.leaseEnd - this.now, ordered };
  }

  /** The seqs `owner` holds. */
  get heldSeqs(): number[] {
    return Array.from({ length: this.sizes.outbox - this.outbox.heldFrom }, (_, k) => this.outbox.heldFrom + 1 + k);
  }

  outboxMessageId(seq: number): string {
    return uuidFor('00000000', seq);
  }

  /** A message id no seeded row has. */
  newMessageId(k: number): string {
    return uuidFor('20000000', k);
  }

  /** Sent rows older than this: half of them. */
  get sentBefore(): number {
    return Math.floor(this.outbox.sentTo / 2);
  }

  get inboxBefore(): number {
    return Math.floor(this.sizes.inbox / 2);
  }

  /** Settled rows older than this: half of them. */
  get settledBefore(): number {
    return Math.floor(this.deadLetters.ignoredTo / 2);
  }

  /** Ids of dead letters `owner` holds, `count` of them. */
  heldDeadLetterIds(count: number): number[] {
    return Array.from({ length: count }, (_, k) => this.deadLetters.expiredTo + 1 + k);
  }

  /** A pending dead letter's id. */
  get pendingDeadLetterId(): number {
    return this.deadLetters.replayingTo + 1;
  }
}

/**
 * The statements of a dead-letter transition as shared/dead-letter-transition.ts runs them (MySQL,
 * SQLite): lock, update, history rows.
 */
export function transitionStatements(d: SqlDialect, t: TableNames, tr: DeadLetterTransition): HotStatement[] {
  const lock = lockDeadLetters(d, t, tr.ids, tr.from, tr.claimedBy, false);
  const update = updateDeadLetters(d, t, tr.ids, tr.set);
  const events = insertDeadLetterEvents(
    d,
    t,
    tr.ids.map((id) => ({
      deadLetterId: id,
      messageId: `dl-${id}`,
      group: 'g',
      at: tr.event.at,
      kind: tr.event.kind,
      attempt: 1,
      detail: null,
      actor: tr.event.actor,
    })),
  );
  const rows = tr.ids.length;
  return [
    { label: 'lock', text: lock.text, values: lock.values, rows },
    { label: 'update', text: update.text, values: update.values, rows },
    { label: 'history', text: events.text, values: events.values, rows },
  ];
}

export function runHotPathPlanConformance(name: string, makeFixture: () => Promise<PlanFixture>): void {
  describe(`hot-path plans on stale statistics: ${name}`, () => {
    let f: PlanFixture;
    beforeAll(async () => {
      f = await makeFixture();
    }, 120_000);
    afterAll(async () => {
      await f?.teardown();
    });

    for (const operation of HOT_OPERATIONS) {
      it(`${operation} touches only what its batch needs`, async () => {
        const statements = f.statements[operation];
        if (typeof statements === 'string') return; // the dialect says why it has none
        expect(statements.length).toBeGreaterThan(0);
        const failed: string[] = [];
        for (const st of statements) {
          const report = await f.examine(st);
          if (report.violations.length > 0) {
            failed.push(`${st.label}: ${report.violations.join('; ')}\n${report.plan}`);
          }
        }
        expect(failed.length, failed.join('\n\n')).toBe(0);
      });
    }
  });
}
