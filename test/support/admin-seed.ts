import { failureRecord } from '../../src/consumer/batch-processor.js';
import type { AdminServiceStore } from '../../src/admin/admin-service.js';
import type { DeadLetterRow } from '../../src/ports/consumer-store.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { newRow } from './rows.js';
import { wire } from './consumer-env.js';

export type AdminTestStore = StoreFixture['store'] & AdminServiceStore;

export interface DeadLetterSeed {
  readonly group: string;
  readonly status?: 'pending' | 'dead';
  /** When the failure happened (the row's createdAt). */
  readonly at?: number;
  readonly error?: string;
  readonly type?: string;
}

/**
 * Dead letters as a failing consumer writes them (through recordDeliveryFailure), `perTx` to a
 * transaction, up to `parallel` transactions at once. Returns their message ids in order.
 */
export async function writeDeadLetters(
  store: AdminTestStore,
  n: number,
  seed: DeadLetterSeed,
  perTx = 500,
  parallel = 1,
): Promise<string[]> {
  const at = seed.at ?? Date.now();
  const status = seed.status ?? 'dead';
  const type = seed.type ?? 'order.created';
  const ids: string[] = new Array<string>(n);
  const chunks: number[] = [];
  for (let i = 0; i < n; i += perTx) chunks.push(i);
  const worker = async () => {
    for (let i = chunks.shift(); i !== undefined; i = chunks.shift()) {
      const start = i;
      await store.transaction(async (tx) => {
        for (let j = start; j < Math.min(n, start + perTx); j++) {
          const message = wire({ type, key: `o-${j}`, payload: { j } });
          ids[j] = message.id;
          const failure = failureRecord(
            { message, topic: type, replay: false },
            seed.group,
            seed.error ?? `boom ${j}`,
            false,
            at,
          );
          await store.deadLetters.recordDeliveryFailure(tx, failure, () =>
            status === 'dead'
              ? { status: 'dead', nextRetryAt: null }
              : { status: 'pending', nextRetryAt: at + 3_600_000 },
          );
        }
      });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return ids;
}

/** {@link writeDeadLetters}, then the rows as stored, oldest first. */
export async function seedDeadLetters(
  store: AdminTestStore,
  n: number,
  seed: DeadLetterSeed,
  perTx = 500,
): Promise<DeadLetterRow[]> {
  const rows: DeadLetterRow[] = [];
  for (const id of await writeDeadLetters(store, n, seed, perTx))
    rows.push((await store.deadLetters.getDeadLetter(id, seed.group))!);
  return rows;
}

/** Outbox rows written as an application would; returns their message ids. */
export async function seedOutbox(store: AdminTestStore, n: number, createdAt = Date.now()): Promise<string[]> {
  const ids: string[] = [];
  await store.transaction(async (tx) => {
    for (let i = 0; i < n; i++) {
      const row = newRow({ createdAt });
      await store.outbox.insert(tx, row, { ordered: false });
      ids.push(row.messageId);
    }
  });
  return ids;
}

/** Marks every pending outbox row sent, as a relay would after the broker's confirm. */
export async function sendAllOutbox(store: AdminTestStore): Promise<void> {
  const rows = await store.outbox.claim({
    owner: 'test-relay',
    limit: 10_000,
    now: Date.now(),
    leaseMs: 60_000,
    ordered: false,
  });
  await store.outbox.markSent(
    rows.map((r) => r.seq),
    Date.now(),
  );
}
