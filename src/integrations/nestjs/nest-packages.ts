import { createRequire } from 'node:module';
import type * as NestCommon from '@nestjs/common';
import type * as NestCore from '@nestjs/core';
import { DriverMissingError } from '../../core/errors.js';

/** The two packages `surety/nestjs` needs, named together in the error when either is missing. */
const PACKAGES = ['@nestjs/common', '@nestjs/core'] as const;

export interface NestPackages {
  readonly common: typeof NestCommon;
  readonly core: typeof NestCore;
}

type Importer = () => Promise<[typeof NestCommon, typeof NestCore]>;

const importNest: Importer = () => Promise.all([import('@nestjs/common'), import('@nestjs/core')]);

/**
 * Imports NestJS for this entry point, whose decorators run as it is evaluated. Not by import statements: a missing
 * package would then fail the module graph with Node's resolution error before any code of ours ran. By `import()`,
 * not `require`: under a loader (tsx, a test runner) `require` can yield a second copy of Nest, whose classes are
 * other injection tokens than the application's. Only a package that cannot be resolved becomes DriverMissingError;
 * one that is there but fails to load (its own dependency missing) keeps Node's error, which names the real culprit.
 * `importer` and `resolver` exist for tests.
 */
export async function loadNest(
  importer: Importer = importNest,
  resolver: Pick<NodeJS.Require, 'resolve'> = createRequire(import.meta.url),
): Promise<NestPackages> {
  try {
    const [common, core] = await importer();
    return { common, core };
  } catch (err) {
    if (PACKAGES.some((pkg) => !resolvable(resolver, pkg)))
      throw new DriverMissingError(PACKAGES.join(' '), { cause: err });
    throw err;
  }
}

function resolvable(resolver: Pick<NodeJS.Require, 'resolve'>, pkg: string): boolean {
  try {
    resolver.resolve(pkg);
    return true;
  } catch {
    return false;
  }
}

export const nest: NestPackages = await loadNest();
