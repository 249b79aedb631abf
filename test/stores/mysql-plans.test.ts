import { adminDialect } from '../../src/stores/mysql/admin-sql.js';
import * as dl from '../../src/stores/mysql/dead-letter-sql.js';
import * as inbox from '../../src/stores/mysql/inbox-sql.js';
import * as sql from '../../src/stores/mysql/outbox-sql.js';
import { insertDeadLetterEvents } from '../../src/stores/sql/admin-sql.js';
import { rescheduleTransition, resolveTransition } from '../../src/stores/sql/dead-letter-transition.js';
import { stepwiseFailureSql } from '../../src/stores/sql/outbox-failure.js';
import { insertValues } from '../../src/stores/sql/outbox-row.js';
import {
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
  // The oldest sent rows, which a purge takes first; a chunk of its deletes is 500 rows.
  const purged = Array.from({ length: 500 }, (_, k) => k + 1);
  const dueIds = Array.from({ length: L.consumerBatch }, (_, k) => L.pendingDeadLetterId + k);
  const statements: Record<HotOperation, HotStatement[] | string> = {
    'outbox.add': [
      { label: 'insert', text: sql.insertOutbox(t), values: [...insertValues(row, 0), row.createdAt], rows: 1 },
      {
        label: 'a duplicate: the existing message id',
        text: sql.selectMessageIdByTypeKey(t),
        values: ['t', '12345'],
        rows: 1,
      },
    ],
    'outbox.add (ordered)': [
      { label: 'bump key_seq', text: sql.bumpKeySeq(t), values: ['k7'], rows: 1 },
      { label: 'read key_seq', text: sql.selectKeySeq(t), values: ['k7'], rows: 1 },
    ],
    'relay.lockedClaim': 'MySQL relays claim with leases only',
    'relay.leaseClaim': [
      ...[false, true].map((ordered) => ({
        label: ordered ? 'select, ordered' : 'select',
        text: sql.selectClaimable(t, prefix, ordered),
        values: [L.now, L.batch],
        rows: L.batch,
      })),
      { label: 'held back', text: sql.heldBack(t, prefix, due.length), values: due, rows: due.length },
      {
        label: 'take the rows',
        text: sql.claimRows(t, due.length),
        values: [L.leaseEnd, 'relay-2', ...due],
        rows: due.length,
      },
    ],
    'relay.markSent': [
      { label: 'markSent', text: sql.markSent(t, seqs.length), values: [L.now, ...seqs], rows: seqs.length },
    ],
    'relay.recordFailure': [
      {
        label: 'update',
        text: stepwiseFailureSql(t).recordFailure,
        values: [1, L.now + 1, 'pending', 'boom', seqs[0], L.owner],
        rows: 1,
      },
      {
        label: 'attempt',
        text: stepwiseFailureSql(t).insertAttempt,
        values: [1, L.now, 'failed', 'boom', L.owner, seqs[0]],
        rows: 1,
      },
    ],
    'relay.release': [
      {
        label: 'release',
        text: sql.releaseClaims(t, seqs.length),
        values: [L.now, L.owner, ...seqs],
        rows: seqs.length,
      },
    ],
    'relay.purgeSent': [
      { label: 'select', text: sql.selectSent(t, prefix), values: [L.sentBefore, L.purgeBatch], rows: L.purgeBatch },
      { label: 'delete rows', text: sql.deleteSent(t, 500), values: purged, rows: 500 },
      {
        label: 'delete their attempts',
        text: sql.deleteAttempts(t, 500),
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
