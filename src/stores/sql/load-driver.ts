import { createRequire } from 'node:module';
import { DriverMissingError } from '../../core/errors.js';

const requireHere = createRequire(import.meta.url);

/** Loads `module` of an optional driver package when a store is opened, or says which package to install. */
export function loadDriver<T>(module: string, pkg = module): T {
  try {
    return requireHere(module) as T;
  } catch (err) {
    throw new DriverMissingError(pkg, { cause: err });
  }
}
