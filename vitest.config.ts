import { defineConfig } from 'vitest/config';
import { packageAlias } from './vitest.alias.js';

export default defineConfig({
  resolve: { alias: packageAlias },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/disruptive/**', 'node_modules/**'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Components without a logger write JSON lines at info; in tests only warnings and errors are worth reading.
    env: { SURETY_LOG_LEVEL: process.env.SURETY_LOG_LEVEL ?? 'warn' },
    // Two cores: more workers only add contention on the shared services.
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default'],
  },
});
