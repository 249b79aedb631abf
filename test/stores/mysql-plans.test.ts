import { adminDialect } from '../../src/stores/mysql/admin-sql.js';
import * as dl from '../../src/stores/mysql/dead-letter-sql.js';
import * as inbox from '../../src/stores/mysql/inbox-sql.js';
import * as sql from '../../src/stores/mysql/outbox-sql.js';
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
import { examineMysql, seedMysqlPlanStore } from './mysql-plan-fixture.js';

const layout = new PlanLayout({ outbox: 100_000, inbox: 50_000, deadLetters: 50_000, attempts: 20_000 });

runHotPathPlanConformance('mysql', async () => {
  const { pool, store, prefix, teardown } = await seedMysqlPlanStore(layout);
  const t = store.tables;
  const L = layout;
  const seqs = L.heldSeqs;
  const due = Array.from({ length: L.batch }, (_, k) => L.outbox.deadTo + 1 + k);
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
  // The oldest sent rows, which a purge takes first; a chunk of its deletes is 500 rows.
  const purged = Array.from({ length: 500 }, (_, k) => k + 1);
  const dueIds = Array.from({ length: L.consumerBatch }, (_, k) => L.pendingDeadLetterId + k);
  const statements: Record<HotOperation, HotStatement[] | string> = {
    'outbox.add': [
      planned('insert', o.insert(row, 0, true), 1),
      planned('a duplicate: the existing message id', o.selectMessageId('t', '12345'), 1),
    ],
    'outbox.add (ordered)': [
      planned('bump key_seq', o.nextKeySeq.statement('k7'), 1),
      planned('read key_seq', o.nextKeySeq.readBack!('k7'), 1),
    ],
    'relay.lockedClaim': 'MySQL relays claim with leases only',
    'relay.leaseClaim': [
      ...[false, true].map((ordered) =>
        planned(ordered ? 'select, ordered' : 'select', claim.select(L.claimRequest(ordered)), L.batch),
      ),
      planned('held back', claim.heldBack!(due), due.length),
      planned('take the rows', claim.take.statement(due, L.claimRequest(false)), due.length),
    ],
    'relay.markSent': [planned('markSent', o.markSent.statement(seqs, L.now), seqs.length)],
    'relay.recordFailure': [
      {
        label: 'update',
        text: recordFailure.sql.recordFailure,
        values: [1, L.now + 1, 'pending', 'boom', seqs[0], L.owner],
        rows: 1,
      },
      {
        label: 'attempt',
        text: recordFailure.sql.insertAttempt,
        values: [1, L.now, 'failed', 'boom', L.owner, seqs[0]],
        rows: 1,
      },
    ],
    'relay.release': [planned('release', o.release.statement(seqs, L.owner, L.now), seqs.length)],
    'relay.purgeSent': [
      { label: 'select', text: purgeSent.sql.selectSent, values: [L.sentBefore, L.purgeBatch], rows: L.purgeBatch },
      { label: 'delete rows', text: purgeSent.sql.deleteRows(500), values: purged, rows: 500 },
      {
        label: 'delete their attempts',
        text: purgeSent.sql.deleteAttempts(500),
        values: purged.map((s) => L.outboxMessageId(s)),
        rows: 500,
      },
    ],
    'consumer.recordInbox': [
      { label: 'insert', text: inbox.insertInbox(t), values: ['m-new', L.group, L.now], rows: 1 },
    ],
    'consumer.recordInboxBatch': [
      {
        label: 'one multi-row insert',
        text: inbox.insertInboxRows(t, L.consumerBatch),
        values: Array.from({ length: L.consumerBatch }, (_, k) => [`m-new-${k}`, L.group, L.now]).flat(),
        rows: L.consumerBatch,
      },
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
          false,
          L.now,
          L.now,
          'boom',
          false,
          L.now,
        ],
        rows: 1,
      },
      { label: 'attempts', text: dl.selectAttempts(t), values: [`dl-${L.pendingDeadLetterId}`, L.group], rows: 1 },
      {
        label: 'decision',
        text: dl.applyDecision(t),
        values: ['pending', L.now + 1, L.now, L.pendingDeadLetterId],
        rows: 1,
      },
      { label: 'history', ...failureEvent, rows: 1 },
    ],
    'consumer.purgeInbox': [
      { label: 'purgeInbox', text: inbox.purgeInbox(t), values: [L.inboxBefore, L.purgeBatch], rows: L.purgeBatch },
    ],
    'consumer.purgeSettledDeadLetters': [
      {
        label: 'select',
        text: dl.selectSettled(t, prefix),
        values: [L.settledBefore, L.purgeBatch],
        rows: L.purgeBatch,
      },
      {
        label: 'delete rows',
        text: dl.deleteByIds(t, 500),
        values: Array.from({ length: 500 }, (_, k) => k + 1),
        rows: 500,
      },
      {
        label: 'delete events',
        text: dl.deleteEvents(t, 500),
        values: Array.from({ length: 500 }, (_, k) => k + 1),
        rows: 500,
      },
    ],
    'replay.claimDue': [
      {
        label: 'expired leases',
        text: dl.selectExpiredLeases(t, prefix),
        values: [L.now, L.group, L.consumerBatch],
        rows: L.consumerBatch,
      },
      { label: 'due', text: dl.selectDue(t, prefix), values: [L.now, L.group, L.consumerBatch], rows: L.consumerBatch },
      {
        label: 'take the rows',
        text: dl.claimRows(t, dueIds.length),
        values: ['replayer-2', L.leaseEnd, L.now, L.now, L.now, ...dueIds],
        rows: dueIds.length,
      },
    ],
    'replay.markResolved': transitionStatements(adminDialect, t, resolveTransition([heldIds[0]!], L.owner, L.now)),
    'replay.markResolvedMany': transitionStatements(adminDialect, t, resolveTransition(heldIds, L.owner, L.now)),
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
  return { layout, statements, examine: (st) => examineMysql(pool, st), teardown };
});
