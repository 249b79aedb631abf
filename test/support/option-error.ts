import { InvalidOptionError } from '../../src/core/errors.js';

/** The InvalidOptionError `build` throws; fails the test when it throws nothing or something else. */
export function optionError(build: () => unknown): InvalidOptionError {
  try {
    build();
  } catch (err) {
    if (err instanceof InvalidOptionError) return err;
    throw err;
  }
  throw new Error('expected an InvalidOptionError');
}
