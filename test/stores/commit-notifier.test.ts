import { describe, expect, it } from 'vitest';
import { CommitNotifier } from '../../src/stores/postgres/commit-notifier.js';

/** A pool whose queries stay in flight until the test answers them (pure logic: no database needed). */
function heldPool() {
  const sent: { values: unknown[]; answer: (fail?: boolean) => void }[] = [];
  return {
    sent,
    query(_text: string, values?: unknown[]) {
      return new Promise<{ rows: unknown[]; rowCount: number }>((resolve, reject) =>
        sent.push({
          values: values ?? [],
          answer: (fail) => (fail ? reject(new Error('gone')) : resolve({ rows: [], rowCount: 1 })),
        }),
      );
    },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('CommitNotifier', () => {
  it('sends one NOTIFY at a time and folds the signals made meanwhile into one more', async () => {
    const pool = heldPool();
    const notifier = new CommitNotifier(pool, 'chan');
    notifier.signal();
    notifier.signal();
    notifier.signal();
    expect(pool.sent.length).toBe(1);
    expect(pool.sent[0]!.values).toEqual(['chan', '']);
    pool.sent[0]!.answer();
    await turn();
    expect(pool.sent.length).toBe(2); // the two signals after the first NOTIFY was sent: one more
    pool.sent[1]!.answer();
    await notifier.idle();
    expect(pool.sent.length).toBe(2);
    notifier.signal(); // idle again: a new one at once
    expect(pool.sent.length).toBe(3);
    pool.sent[2]!.answer();
    await notifier.idle();
  });

  it('survives a failed NOTIFY and sends the next signal', async () => {
    const pool = heldPool();
    const notifier = new CommitNotifier(pool, 'chan');
    notifier.signal();
    pool.sent[0]!.answer(true);
    await notifier.idle();
    notifier.signal();
    expect(pool.sent.length).toBe(2);
    pool.sent[1]!.answer();
    await notifier.idle();
  });
});
