import { z } from 'zod';
import { DEFAULT_STORE_NAME } from '../ports/store-name.js';
import { quoteValue } from './quote-value.js';

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => v !== null && typeof v === 'object' && !Array.isArray(v);

const NEITHER =
  'is required: set database.url, SURETY_DATABASE_URL or --database; or databases for several (SURETY_DATABASES)';
const BOTH = 'give either database (one) or databases (several, by name), not both';

/** The names a raw config gives its databases, in order; undefined when it gives no usable list. */
function namesOf(config: Mapping): string[] | undefined {
  if (config.database !== undefined && config.databases !== undefined) return undefined;
  if (isMapping(config.databases)) return Object.keys(config.databases);
  return config.database !== undefined ? [DEFAULT_STORE_NAME] : undefined;
}

/**
 * Rules that span sections: exactly one of `database` and `databases`, and `relay.databases` and
 * `replayer.database` name configured databases. They run even when a section has other problems,
 * so a config's mistakes are all reported at once.
 */
export const databaseRules = z.superRefine(
  (config: Mapping, ctx) => {
    const one = config.database !== undefined;
    const many = config.databases !== undefined;
    // `origins` asks the loader to say where each key was set (file, variable or flag).
    if (one && many)
      ctx.addIssue({
        code: 'custom',
        path: ['databases'],
        message: BOTH,
        params: { origins: ['database', 'databases'] },
      });
    if (!one && !many) ctx.addIssue({ code: 'custom', path: ['database'], message: NEITHER });
    const names = namesOf(config);
    if (!names || names.length === 0) return;
    const check = (path: (string | number)[], value: unknown) => {
      if (typeof value === 'string' && !names.includes(value))
        ctx.addIssue({
          code: 'custom',
          path,
          message: `must be one of the databases: ${names.join(', ')} (got ${quoteValue(value.slice(0, 60))})`,
        });
    };
    const relay = isMapping(config.relay) ? config.relay : {};
    if (Array.isArray(relay.databases)) relay.databases.forEach((name, i) => check(['relay', 'databases', i], name));
    const replayer = isMapping(config.replayer) ? config.replayer : {};
    check(['replayer', 'database'], replayer.database);
  },
  { when: (payload) => isMapping(payload.value) },
);
