import * as dl from '../../src/stores/postgres/dead-letter-sql.js';
import * as inbox from '../../src/stores/postgres/inbox-sql.js';
import * as sql from '../../src/stores/postgres/outbox-sql.js';
import { insertValues } from '../../src/stores/sql/outbox-row.js';
import {
  PlanLayout,
  runHotPathPlanConformance,
  type HotOperation,
  type HotStatement,
} from '../conformance/hot-path-plan-suite.js';
import { newRow } from '../support/rows.js';
import { examinePostgres, seedPostgresPlanStore } from './postgres-plan-fixture.js';

// Large enough that a statement filtering its way through a table reads ten thousand times its batch.
const layout = new PlanLayout({ outbox: 300_000, inbox: 150_000, deadLetters: 150_000, attempts: 60_000 });

runHotPathPlanConformance('postgres', async () => {
  const { pool, store, teardown } = await seedPostgresPlanStore(layout);
  const t = store.tables;
  const L = layout;
  const seqs = L.heldSeqs;
  const row = { ...newRow(), messageId: L.newMessageId(1) };
  const failure = (seq: number) => ({
    seq,
    owner: L.owner,
    attempts: 1,
    nextAttemptAt: L.now + 1,
    dead: false,
    error: 'e',
  });
  // The settings of the store's own transactions, as it runs each statement: forced plans
  // (runForcedPlan) and locked batches. Statements without run as they are, often in the caller's transaction.
  const forced = sql.CLAIM_PLAN_SETTINGS;
  const locked = sql.lockedClaimSettings(60_000);
  const heldIds = L.heldDeadLetterIds(L.consumerBatch);
  const dlFailure = (messageId: string) => [
    messageId,
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
  ];
  const statements: Record<HotOperation, HotStatement[]> = {
    'outbox.add': [
      {
        label: 'insert and NOTIFY',
        text: sql.insertOutbox(t),
        values: [...insertValues(row, 0), store.notifyChannel],
        rows: 1,
      },
      { label: 'insert, NOTIFY after commit', text: sql.insertOutboxQuietly(t), values: insertValues(row, 0), rows: 1 },
      {
        label: 'a duplicate: the existing message id',
        text: sql.selectMessageIdByTypeKey(t),
        values: ['t', '12345'],
        rows: 1,
      },
    ],
    'outbox.add (ordered)': [{ label: 'next key_seq', text: sql.nextKeySeq(t), values: ['k7'], rows: 1 }],
    'relay.lockedClaim': [false, true].map((ordered) => ({
      label: ordered ? 'ordered' : 'unordered',
      text: sql.lockDueOutbox(t, ordered),
      values: [L.now, L.batch],
      rows: L.batch,
      settings: locked,
    })),
    'relay.leaseClaim': [false, true].map((ordered) => ({
      label: ordered ? 'ordered' : 'unordered',
      text: sql.claimOutbox(t, ordered),
      values: [L.now, L.batch, L.leaseEnd, 'relay-2'],
      rows: L.batch,
      settings: forced,
    })),
    'relay.markSent': [
      { label: 'store.markSent', text: sql.markSent(t), values: [seqs, L.now], rows: seqs.length, settings: forced },
      {
        label: 'in a locked batch',
        text: sql.markSent(t),
        values: [seqs, L.now],
        rows: seqs.length,
        settings: locked,
      },
    ],
    'relay.recordFailure': [
      {
        label: 'store.outbox.recordFailure (owner)',
        text: sql.recordFailure(t),
        values: sql.recordFailureValues(failure(seqs[0]!), L.now),
        rows: 1,
      },
      {
        label: 'in a locked batch',
        text: sql.recordFailure(t, false),
        values: sql.recordFailureValues(failure(L.outbox.deadTo + 1), L.now),
        rows: 1,
        settings: locked,
      },
    ],
    'relay.release': [
      {
        label: 'release',
        text: sql.releaseClaims(t),
        values: [L.owner, seqs, L.now],
        rows: seqs.length,
        settings: forced,
      },
    ],
    'relay.purgeSent': [
      {
        label: 'sent rows with their attempts',
        text: sql.purgeSent(t),
        values: [L.sentBefore, L.purgeBatch],
        rows: L.purgeBatch,
        settings: forced,
      },
    ],
    'consumer.recordInbox': [
      { label: 'insertInbox', text: inbox.insertInbox(t), values: ['m-new', L.group, L.now], rows: 1 },
    ],
    'consumer.recordInboxBatch': [
      {
        label: 'insertInboxBatch, half of them seen before',
        text: inbox.insertInboxBatch(t),
        values: [
          Array.from({ length: L.consumerBatch }, (_, k) => (k % 2 ? `m-${k + 1}` : `m-new-${k}`)),
          L.group,
          L.now,
        ],
        rows: L.consumerBatch,
      },
    ],
    'consumer.recordDeliveryFailure': [
      { label: 'upsert, a new message', text: dl.upsertFailure(t), values: dlFailure('dl-new'), rows: 1 },
      {
        label: 'upsert, a pending one',
        text: dl.upsertFailure(t),
        values: dlFailure(`dl-${L.pendingDeadLetterId}`),
        rows: 1,
      },
      {
        label: 'applyDecision',
        text: dl.applyDecision(t),
        values: [L.pendingDeadLetterId, 'pending', L.now + 1, L.now, 'boom'],
        rows: 1,
      },
    ],
    'consumer.purgeInbox': [
      {
        label: 'purgeInbox',
        text: inbox.purgeInbox(t),
        values: [L.inboxBefore, L.purgeBatch],
        rows: L.purgeBatch,
        settings: forced,
      },
    ],
    'consumer.purgeSettledDeadLetters': [
      {
        label: 'purgeSettled',
        text: dl.purgeSettled(t),
        values: [L.settledBefore, L.purgeBatch],
        rows: L.purgeBatch,
        settings: forced,
      },
    ],
    'replay.claimDue': [
      {
        label: 'expired leases, then due rows',
        text: dl.claimDue(t),
        values: [L.now, L.consumerBatch, 'replayer-2', L.leaseEnd, L.group],
        rows: L.consumerBatch,
        settings: forced,
      },
    ],
    'replay.markResolved': [
      { label: 'markResolved', text: dl.markResolved(t), values: [heldIds[0], L.owner, L.now], rows: 1 },
    ],
    'replay.markResolvedMany': [
      {
        label: 'markResolvedMany',
        text: dl.markResolvedMany(t),
        values: [heldIds, L.owner, L.now],
        rows: heldIds.length,
      },
    ],
    'replay.reschedule': [
      {
        label: 'reschedule',
        text: dl.reschedule(t),
        values: [heldIds[0], L.owner, 2, 'pending', L.now + 1, 'boom', L.now],
        rows: 1,
      },
    ],
  };
  return { layout, statements, examine: (st) => examinePostgres(pool, st), teardown };
});
