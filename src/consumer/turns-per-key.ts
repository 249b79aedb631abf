/** Per transaction, per key: the tail of the work queued so far. */
const tails = new WeakMap<object, Map<string, Promise<void>>>();

/**
 * Runs `work` once earlier work for the same `key` in the same transaction `tx` has settled.
 * Handlers that run at once in one batch share their transaction, so row locks do not order them.
 */
export async function inTurnPerKey<T>(tx: object, key: string, work: () => Promise<T>): Promise<T> {
  let byKey = tails.get(tx);
  if (!byKey) tails.set(tx, (byKey = new Map()));
  const before = byKey.get(key) ?? Promise.resolve();
  let done!: () => void;
  const tail = before.then(() => new Promise<void>((resolve) => (done = resolve)));
  byKey.set(key, tail);
  await before;
  try {
    return await work();
  } finally {
    done();
    if (byKey.get(key) === tail) byKey.delete(key);
  }
}
