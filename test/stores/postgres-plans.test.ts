import * as dl from '../../src/stores/postgres/dead-letter-sql.js';
import * as inbox from '../../src/stores/postgres/inbox-sql.js';
import * as sql from '../../src/stores/postgres/outbox-sql.js';
import {
  inMode,
  planned,
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
  // The outbox's statements as the store builds them, each run as one statement.
  const o = sql.outboxStatements(t, store.notifyChannel);
  const claim = inMode(o.claim, 'one');
  const recordFailure = inMode(o.recordFailure, 'one');
  const purgeSent = inMode(o.purgeSent, 'one');
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
      planned('insert and NOTIFY', o.insert(row, 0, true), 1),
      planned('insert, NOTIFY after commit', o.insert(row, 0, false), 1),
      planned('a duplicate: the existing message id', o.selectMessageId('t', '12345'), 1),
    ],
    'outbox.add (ordered)': [planned('next key_seq', o.nextKeySeq.statement('k7'), 1)],
    'relay.lockedClaim': [false, true].map((ordered) => ({
      label: ordered ? 'ordered' : 'unordered',
      text: sql.lockDueOutbox(t, ordered),
      values: [L.now, L.batch],
      rows: L.batch,
      settings: locked,
    })),
    'relay.leaseClaim': [false, true].map((ordered) =>
      planned(ordered ? 'ordered' : 'unordered', claim.statement(L.claimRequest(ordered)), L.batch, forced),
    ),
    'relay.markSent': [
      planned('store.markSent', o.markSent.statement(seqs, L.now), seqs.length, forced),
      {
        label: 'in a locked batch',
        text: sql.markSent(t),
        values: [seqs, L.now],
        rows: seqs.length,
        settings: locked,
      },
    ],
    'relay.recordFailure': [
      planned('store.outbox.recordFailure (owner)', recordFailure.statement(failure(seqs[0]!), L.now), 1),
      {
        label: 'in a locked batch',
        text: sql.recordFailure(t, false),
        values: sql.recordFailureValues(failure(L.outbox.deadTo + 1), L.now),
        rows: 1,
        settings: locked,
      },
    ],
    'relay.release': [planned('release', o.release.statement(seqs, L.owner, L.now), seqs.length, forced)],
    'relay.purgeSent': [
      planned('sent rows with their attempts', purgeSent.statement(L.sentBefore, L.purgeBatch), L.purgeBatch, forced),
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
