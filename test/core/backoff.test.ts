import { describe, expect, it } from 'vitest';
import { createBackoff } from '../../src/core/backoff.js';
import { resolveRelayOptions } from '../../src/producer/relay-options.js';
import { optionError } from '../support/option-error.js';

describe('createBackoff', () => {
  it('doubles from initialMs up to maxMs, without jitter', () => {
    const b = createBackoff({ initialMs: 100, factor: 2, maxMs: 500, jitter: 0 });
    expect([1, 2, 3, 4, 5].map((n) => b.delayMs(n))).toEqual([100, 200, 400, 500, 500]);
  });

  it('follows a schedule, repeating its last delay', () => {
    const b = createBackoff({ schedule: [10, 50], jitter: 0 });
    expect([1, 2, 3].map((n) => b.delayMs(n))).toEqual([10, 50, 50]);
  });

  it('keeps the defaults where an option is given as undefined', () => {
    const b = createBackoff({ initialMs: undefined, jitter: 0 });
    expect(b.delayMs(1)).toBe(1_000);
  });

  it('spreads a delay by at most the jitter', () => {
    const b = createBackoff({ initialMs: 1_000, jitter: 0.2 });
    expect(b.delayMs(1, () => 0)).toBe(800);
    expect(b.delayMs(1, () => 1)).toBe(1_200);
  });

  it.each([
    [{ initialMs: 0 }, 'backoff.initialMs', 'must be > 0'],
    [{ factor: 0.5 }, 'backoff.factor', 'must be >= 1'],
    [{ initialMs: 500, maxMs: 100 }, 'backoff.maxMs', 'must be >= initialMs'],
    [{ jitter: 2 }, 'backoff.jitter', 'must be between 0 and 1'],
    [{ schedule: [] }, 'backoff.schedule', 'must be a non-empty list of finite delays >= 0 ms'],
    [{ schedule: [10, -1] }, 'backoff.schedule[1]', 'must be a finite delay >= 0 ms'],
    [{ initialMs: '5' }, 'backoff.initialMs', 'expected number'],
  ])('refuses %j, naming %s', (options, option, detail) => {
    const err = optionError(() => createBackoff(options as never));
    expect(err.option).toBe(option);
    expect(err.detail).toContain(detail);
  });

  it("names the relay's option path when the relay's backoff is wrong", () => {
    const publisher = {
      publish: async () => {},
      isReady: () => true,
      waitUntilReady: async () => true,
      close: async () => {},
    };
    const store = { outbox: {} } as never; // refused before the store is used
    const err = optionError(() => resolveRelayOptions({ store, publisher, backoff: { initialMs: 500, maxMs: 10 } }));
    expect(err.option).toBe('relay.backoff.maxMs');
  });
});
