import { describe, expect, it } from 'vitest';
import { inTurnPerKey } from '../../src/consumer/turns-per-key.js';

/** A promise the test settles by hand. */
function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('inTurnPerKey', () => {
  it('runs work for one key of one transaction one at a time, in order, also after a failure', async () => {
    const tx = {};
    const log: string[] = [];
    const first = deferred();
    const second = deferred();
    const a = inTurnPerKey(tx, 'k', async () => {
      log.push('a starts');
      await first.promise;
      log.push('a ends');
    });
    const b = inTurnPerKey(tx, 'k', async () => {
      log.push('b starts');
      await second.promise;
    });
    const c = inTurnPerKey(tx, 'k', async () => void log.push('c runs'));
    await Promise.resolve();
    expect(log).toEqual(['a starts']);
    first.reject(new Error('a failed'));
    await expect(a).rejects.toThrow('a failed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['a starts', 'b starts']);
    second.resolve();
    await Promise.all([b, c]);
    expect(log).toEqual(['a starts', 'b starts', 'c runs']);
  });

  it('lets other keys and other transactions run at once', async () => {
    const tx = {};
    const held = deferred();
    const running: string[] = [];
    const hold = inTurnPerKey(tx, 'k', async () => {
      running.push('k');
      await held.promise;
    });
    await inTurnPerKey(tx, 'other key', async () => void running.push('other key'));
    await inTurnPerKey({}, 'k', async () => void running.push('other transaction'));
    expect(running).toEqual(['k', 'other key', 'other transaction']);
    held.resolve();
    await hold;
    expect(await inTurnPerKey(tx, 'k', async () => 'free again')).toBe('free again');
  });
});
