import { defineConfig } from 'vitest/config';

/** Tests that stop shared services: one file at a time, after the main suite. */
export default defineConfig({
  test: {
    include: ['test/disruptive/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
