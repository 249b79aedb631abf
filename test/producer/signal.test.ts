import { describe, expect, it } from 'vitest';
import { Signal } from '../../src/producer/signal.js';

describe('Signal', () => {
  it('keeps a fire made before anyone waits, and folds many into one', async () => {
    const s = new Signal();
    s.fire();
    s.fire();
    await s.wait(60_000); // resolves at once: the fire was kept
    const next = await Promise.race([s.wait(20).then(() => 'timeout'), Promise.resolve('pending')]);
    expect(next).toBe('pending');
  });

  it('race: true on a fire, consuming it', async () => {
    const s = new Signal();
    const raced = s.race(new Promise(() => undefined));
    s.fire();
    expect(await raced).toBe(true);
    expect(await s.race(Promise.resolve())).toBe(false); // nothing left over
  });

  it('race: false once the other promise settles first, leaving later fires for the next waiter', async () => {
    const s = new Signal();
    let settle!: () => void;
    const raced = s.race(new Promise<void>((r) => (settle = r)));
    settle();
    expect(await raced).toBe(false);
    s.fire();
    expect(await s.race(new Promise(() => undefined))).toBe(true);
  });

  it('race: a rejected promise ends the race too', async () => {
    const s = new Signal();
    expect(await s.race(Promise.reject(new Error('claim failed')))).toBe(false);
  });

  it('race: a fire already pending wins at once', async () => {
    const s = new Signal();
    s.fire();
    expect(await s.race(Promise.resolve())).toBe(true);
  });
});
