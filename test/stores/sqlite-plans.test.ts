import * as dl from '../../src/stores/sqlite/dead-letter-sql.js';
import * as inbox from '../../src/stores/sqlite/inbox-sql.js';
import * as sql from '../../src/stores/sqlite/outbox-sql.js';
import { adminDialect } from '../../src/stores/sqlite/admin-sql.js';
import { insertDeadLetterEvents } from '../../src/stores/sql/admin-sql.js';
import { rescheduleTransition, resolveTransition } from '../../src/stores/sql/dead-letter-transition.js';
import {
  inMode,
  planned,
  PlanLayout,
  runHotPathPlanConformance,
  transitionStatements,
  type HotOperation,
  type HotStatement,
} from '../conformance/hot-path-plan-suite.js';
import { newRow } from '../support/rows.js';
import { examineSqlite, seedSqlitePlanStore } from './sqlite-plan-fixture.js';

const layout = new PlanLayout({ outbox: 100_000, inbox: 50_000, deadLetters: 50_000, attempts: 20_000 });

runHotPathPlanConformance('sqlite', async () => {
  const { store, prefix, teardown } = await seedSqlitePlanStore(layout);
  const t = store.tables;
  const L = layout;
  // Rows are touched one key per statement (see src/stores/sqlite/outbox-sql.ts).
  const seq = L.heldSeqs[0]!;
  const row = { ...newRow(), messageId: L.newMessageId(1) };
  const heldIds = L.heldDeadLetterIds(L.consumerBatch);
  const failureEvent = insertDeadLetterEvents(adminDialect, t, [
    {
      deadLetterId: L.pendingDeadLetterId,
      messageId: `dl-${L.pendingDeadLetterId}`,
      group: L.group,
      at: L.now,
      kind: 'failed',
      attempt: 2,
      detail: 'boom',
      actor: null,
    },
  ]);
  // The outbox's statements as the store builds them; the stepwise ones with the values the shared code binds.
  const o = sql.outboxStatements(t, prefix);
  const claim = inMode(o.claim, 'stepwise');
  const recordFailure = inMode(o.recordFailure, 'stepwise');
  const purgeSent = inMode(o.purgeSent, 'stepwise');
  const statements: Record<HotOperation, HotStatement[] | string> = {
    'outbox.add': [
      planned('insert', o.insert(row, 0, true), 1),
      planned('a duplicate: the existing message id', o.selectMessageId('t', '12345'), 1),
    ],
    'outbox.add (ordered)': [planned('next key_seq', o.nextKeySeq.statement('k7'), 1)],
    'relay.lockedClaim': 'SQLite relays claim with leases only',
    'relay.leaseClaim': [
      ...[false, true].map((ordered) =>
        planned(ordered ? 'select, ordered' : 'select', claim.select(L.claimRequest(ordered)), L.batch),
      ),
      planned('take a row', claim.take.statement([L.outbox.deadTo + 1], L.claimRequest(false)), 1),
    ],
    'relay.markSent': [planned('one row', o.markSent.statement([seq], L.now), 1)],
    'relay.recordFailure': [
      {
        label: 'update',
        text: recordFailure.sql.recordFailure,
        values: [1, L.now + 1, 'pending', 'boom', seq, L.owner],
        rows: 1,
      },
      {
        label: 'attempt',
        text: recordFailure.sql.insertAttempt,
        values: [1, L.now, 'failed', 'boom', L.owner, seq],
        rows: 1,
      },
    ],
    'relay.release': [planned('one row', o.release.statement([seq], L.owner, L.now), 1)],
    'relay.purgeSent': [
      { label: 'select', text: purgeSent.sql.selectSent, values: [L.sentBefore, L.purgeBatch], rows: L.purgeBatch },
      { label: 'delete a row', text: purgeSent.sql.deleteRows(1), values: [1], rows: 1 },
      {
        label: 'delete its attempts',
        text: purgeSent.sql.deleteAttempts(1),
        values: [L.outboxMessageId(1)],
        rows: 1,
      },
    ],
    'consumer.recordInbox': [
      { label: 'insert', text: inbox.insertInbox(t), values: ['m-new', L.group, L.now], rows: 1 },
    ],
    'consumer.recordInboxBatch': [
      { label: 'one insert per id', text: inbox.insertInbox(t), values: ['m-1', L.group, L.now], rows: 1 },
    ],
    'consumer.recordDeliveryFailure': [
      {
        label: 'upsert',
        text: dl.upsertFailure(t),
        values: [
          `dl-${L.pendingDeadLetterId}`,
          L.group,
          'topic',
          't',
          'k',
          1,
          '{}',
          'body',
          'utf8',
          'boom',
          0,
          L.now,
          L.now,
        ],
        rows: 1,
      },
      {
        label: 'decision',
        text: dl.applyDecision(t),
        values: ['pending', L.now + 1, L.now, L.pendingDeadLetterId],
        rows: 1,
      },
      { label: 'history', ...failureEvent, rows: 1 },
    ],
    'consumer.purgeInbox': [
      {
        label: 'select',
        text: inbox.selectExpired(t, prefix),
        values: [L.inboxBefore, L.purgeBatch],
        rows: L.purgeBatch,
      },
      { label: 'delete a row', text: inbox.deleteRow(t), values: [1], rows: 1 },
    ],
    'consumer.purgeSettledDeadLetters': [
      {
        label: 'select',
        text: dl.selectSettled(t, prefix),
        values: [L.settledBefore, L.purgeBatch],
        rows: L.purgeBatch,
      },
      { label: 'delete a row', text: dl.deleteById(t), values: [1], rows: 1 },
      { label: 'delete its history', text: dl.deleteEvents(t, prefix), values: [1], rows: 1 },
    ],
    'replay.claimDue': [
      {
        label: 'select expired leases, then due rows',
        text: dl.selectClaimable(t, prefix),
        values: [L.now, L.group, L.consumerBatch, L.now, L.group, L.consumerBatch, L.consumerBatch],
        rows: L.consumerBatch,
      },
      {
        label: 'take a row',
        text: dl.claimRow(t),
        values: ['replayer-2', L.leaseEnd, L.now, L.pendingDeadLetterId],
        rows: 1,
      },
    ],
    'replay.markResolved': transitionStatements(adminDialect, t, resolveTransition([heldIds[0]!], L.owner, L.now)),
    // One id at a time, as the dead-letter concern runs every SQLite transition (transitionChunk 1).
    'replay.markResolvedMany': transitionStatements(adminDialect, t, resolveTransition([heldIds[1]!], L.owner, L.now)),
    'replay.reschedule': transitionStatements(
      adminDialect,
      t,
      rescheduleTransition({
        id: heldIds[0]!,
        owner: L.owner,
        attempts: 2,
        decision: { status: 'pending', nextRetryAt: L.now + 1 },
        error: 'boom',
        now: L.now,
      }),
    ),
  };
  return { layout, statements, examine: async (st) => examineSqlite(store, st), teardown };
});
