import { InvalidOptionError } from '../../core/errors.js';

/**
 * The four functions of a test runner the suites register their tests with. Vitest's and Jest's
 * `describe`, `it`, `beforeEach` and `afterEach` fit as they are; the suites assert with
 * `node:assert`, so they need no runner's `expect`.
 */
export interface TestRunner {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
  beforeEach(fn: () => Promise<void>): void;
  afterEach(fn: () => Promise<void>): void;
}

/** The runner given, or the one a runner with globals (Jest, Vitest with `globals: true`) installed. */
export function resolveRunner(given: TestRunner | undefined): TestRunner {
  if (given) return given;
  const g = globalThis as Partial<TestRunner>;
  if (g.describe && g.it && g.beforeEach && g.afterEach) {
    return { describe: g.describe, it: g.it, beforeEach: g.beforeEach, afterEach: g.afterEach };
  }
  throw new InvalidOptionError(
    'runner',
    "no test runner: pass { describe, it, beforeEach, afterEach } (e.g. from 'vitest'), or run under globals",
  );
}
