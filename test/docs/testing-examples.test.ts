import { execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docTestFiles, writePrograms, type DocProgram } from '../support/doc-programs.js';
import { uniqueName } from '../support/env.js';
import { exited } from '../support/spawn.js';

// docs/testing.md's two test files, run as written by their own runner in a child process, which must exit by itself
// (no --forceExit) within a bound: the harness leaves no open handle. Vitest imports the package from the sources (as
// the other docs' programs do); the Jest example is plain JavaScript, against the package built from the sources.

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const examples = docTestFiles(root, ['docs/testing.md']);
const EXIT_WITHIN_MS = 90_000;

function example(name: string): DocProgram {
  const found = examples.find((e) => e.name === `docs/testing.md#${name}`);
  if (!found) throw new Error(`docs/testing.md has no ${name}; found ${examples.map((e) => e.name).join(', ')}`);
  return found;
}

/** The package's entry points: `surety/testing` -> `testing/index` (relative to src/ and dist/, without extension). */
function entryPoints(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { default?: string }>;
  };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'string' ? target : target.default;
    if (!file?.startsWith('./dist/') || !file.endsWith('.js')) continue;
    entries.set(subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`, file.slice(7, -3));
  }
  return entries;
}

/** Runs `args` with node in `cwd`; resolves with its exit, or fails when it has not exited within the bound. */
async function runToExit(args: string[], cwd: string) {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS);
  const result = await exited(child).finally(() => clearTimeout(timer));
  const output = `${result.stdout}\n${result.stderr}`;
  if (result.signal === 'SIGKILL') throw new Error(`did not exit within ${EXIT_WITHIN_MS} ms:\n${output}`);
  return { code: result.code, output };
}

describe('the test files of docs/testing.md', () => {
  const dir = join(root, '.scratch', uniqueName('testing_examples'));

  beforeAll(() => mkdirSync(dir, { recursive: true }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the Vitest and the Jest example', () => {
    expect(examples.map((e) => e.name)).toEqual([
      'docs/testing.md#billing.test.ts',
      'docs/testing.md#billing.jest.test.mjs',
    ]);
  });

  it('type-checks and runs the Vitest example, and Vitest exits by itself', { timeout: 240_000 }, async () => {
    const vitestDir = join(dir, 'vitest');
    // As the docs' programs are: a tsconfig whose paths map the package's names to the sources.
    writePrograms(root, vitestDir, [example('billing.test.ts')]);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: vitestDir }).catch(
      (err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }),
    );
    expect(checked.stdout).toBe('');
    const alias = [...entryPoints()].map(([name, file]) => [name, join(root, 'src', `${file}.ts`)]);
    writeFileSync(
      join(vitestDir, 'vitest.config.mjs'),
      `export default { resolve: { alias: ${JSON.stringify(alias)}.map(([n, t]) => ({ find: new RegExp('^' + n + '$'), replacement: t })) },
  test: { include: ['*.test.ts'], pool: 'forks' } };\n`,
    );
    const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
    const { code: exit, output } = await runToExit([vitest, 'run', '--config', 'vitest.config.mjs'], vitestDir);
    expect(exit, output).toBe(0);
    expect(output).toMatch(/Tests\s+4 passed \(4\)/);
    expect(output).not.toMatch(/close timed out|prevents Vite server from exiting|hanging-process/i);
  });

  it('runs the Jest example against the built package, and Jest exits by itself', { timeout: 180_000 }, async () => {
    const code = example('billing.jest.test.mjs').code;
    const jestDir = join(dir, 'jest');
    mkdirSync(jestDir);
    writeFileSync(join(jestDir, 'billing.jest.test.mjs'), code);
    // Build what the example imports (and what that imports) from the sources, as the package's dist/.
    const entries = entryPoints();
    const imported = [...code.matchAll(/from '(surety(?:\/[\w-]+)?)'/g)].map((m) => m[1]!);
    const dist = join(jestDir, 'dist');
    writeFileSync(
      join(jestDir, 'tsconfig.json'),
      JSON.stringify({
        extends: relative(jestDir, join(root, 'tsconfig.json')),
        compilerOptions: {
          rootDir: relative(jestDir, join(root, 'src')),
          outDir: 'dist',
          noEmit: false,
          declaration: false,
          sourceMap: false,
        },
        files: imported.map((name) => relative(jestDir, join(root, 'src', `${entries.get(name)}.ts`))),
        include: [],
      }),
    );
    await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
      cwd: jestDir,
    });
    const moduleNameMapper = Object.fromEntries(
      imported.map((name) => [`^${name}$`, join(dist, `${entries.get(name)}.js`)]),
    );
    writeFileSync(
      join(jestDir, 'jest.config.json'),
      JSON.stringify({ testEnvironment: 'node', transform: {}, testMatch: ['**/*.test.mjs'], moduleNameMapper }),
    );
    const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
    const { code: exit, output } = await runToExit(
      ['--experimental-vm-modules', jest, '--config', 'jest.config.json', '--rootDir', jestDir],
      jestDir,
    );
    expect(exit, output).toBe(0);
    expect(output).toMatch(/Tests:\s+2 passed, 2 total/);
    expect(output).not.toMatch(/did not exit|open handle/i);
  });
});
