import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The package's own names (`surety`, `surety/postgres`, …) resolve to the sources, as tsconfig's `paths` map them
// for tsc and tsx: tests and examples import what users import.
const { compilerOptions } = JSON.parse(readFileSync(new URL('./tsconfig.json', import.meta.url), 'utf8')) as {
  compilerOptions: { paths: Record<string, [string]> };
};

export const packageAlias = Object.entries(compilerOptions.paths).map(([name, [target]]) => ({
  find: new RegExp(`^${name}$`),
  replacement: fileURLToPath(new URL(target, import.meta.url)),
}));
