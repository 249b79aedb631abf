import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The package's own names (`surety`, `surety/postgres`, …) resolve to the sources, as tsconfig's `paths` map them
// for tsc and tsx: tests and examples import what users import.
const { compilerOptions } = JSON.parse(readFileSync(new URL('./tsconfig.json', import.meta.url), 'utf8')) as {
  compilerOptions: { paths: Record<string, [string]> };
};
const alias = Object.entries(compilerOptions.paths).map(([name, [target]]) => ({
  find: new RegExp(`^${name}$`),
  replacement: fileURLToPath(new URL(target, import.meta.url)),
}));

export default defineConfig({
  resolve: { alias },
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
