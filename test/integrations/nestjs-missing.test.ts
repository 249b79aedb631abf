import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { DriverMissingError } from '../../src/core/errors.js';
import { loadNest } from '../../src/integrations/nestjs/nest-packages.js';

// surety/nestjs in an application that did not install NestJS: the error must say what to install.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
const tempDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `surety-${label}-`));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('surety/nestjs without NestJS installed', () => {
  it('loadNest, resolving from a directory with no NestJS, is a DriverMissingError naming both packages', async () => {
    const nowhere = createRequire(join(tempDir('no-nest'), 'index.js'));
    const missing = Object.assign(new Error("Cannot find package '@nestjs/common'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const err = await loadNest(() => Promise.reject(missing), nowhere).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DriverMissingError);
    expect(err).toMatchObject({
      code: 'SURETY_DRIVER_MISSING',
      message: expect.stringContaining('npm install @nestjs/common @nestjs/core'),
      cause: missing,
    });
  });

  it('keeps the error of a NestJS that is installed but fails to load', async () => {
    const broken = Object.assign(new Error("Cannot find package 'rxjs'"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(loadNest(() => Promise.reject(broken))).rejects.toBe(broken);
  });

  // The sources and every installed package but @nestjs/*, in a directory of their own: an application without NestJS.
  it('importing the entry point fails with SURETY_DRIVER_MISSING, in a process where NestJS cannot be found', async () => {
    const app = tempDir('app');
    cpSync(join(root, 'src'), join(app, 'src'), { recursive: true });
    cpSync(join(root, 'tsconfig.json'), join(app, 'tsconfig.json'));
    writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module' }));
    mkdirSync(join(app, 'node_modules'));
    for (const entry of readdirSync(join(root, 'node_modules'))) {
      if (entry === '@nestjs' || entry === '.bin') continue;
      symlinkSync(join(root, 'node_modules', entry), join(app, 'node_modules', entry));
    }
    writeFileSync(
      join(app, 'probe.ts'),
      `try {
  await import('./src/integrations/nestjs/index.js');
  console.log(JSON.stringify({ loaded: true }));
} catch (err) {
  const e = err as { name: string; code: string; message: string };
  console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message }));
}
`,
    );
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'probe.ts'], { cwd: app, timeout: 60_000 });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({
      name: 'DriverMissingError',
      code: 'SURETY_DRIVER_MISSING',
      message:
        'the optional dependency "@nestjs/common @nestjs/core" is not installed: npm install @nestjs/common @nestjs/core',
    });
  });
});
