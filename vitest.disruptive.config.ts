import { defineConfig } from 'vitest/config';

/** Tests that stop shared services: one file at a time, after the main suite. */
export default defineConfig({
  test: {
    include: ['test/disruptive/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Components without a logger write JSON lines at info; in tests only warnings and errors are worth reading.
    env: { SURETY_LOG_LEVEL: process.env.SURETY_LOG_LEVEL ?? 'warn' },
    fileParallelism: false,
  },
});
