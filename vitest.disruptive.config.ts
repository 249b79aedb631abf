import { defineConfig } from 'vitest/config';
import { packageAlias } from './vitest.alias.js';

/** Tests that stop shared services: one file at a time, after the main suite. */
export default defineConfig({
  resolve: { alias: packageAlias },
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
