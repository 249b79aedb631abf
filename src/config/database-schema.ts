import { z } from 'zod';
import { STORE_NAME } from '../ports/store-name.js';
import { quoteValue } from './quote-value.js';

const sqlName = (what: string) =>
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, { error: `must be a ${what}: letters, digits and _` });

const url = (required: string) =>
  z.string({ error: required }).superRefine((value, ctx) => {
    if (!/^(postgres|postgresql|mysql|mariadb|sqlite):/i.test(value))
      ctx.addIssue({
        code: 'custom',
        message: `unsupported URL ${quoteValue(value)}: use postgres://, mysql://, mariadb:// or sqlite:<path>`,
      });
  });

const fields = (required: string) => ({
  /** `postgres://…`, `mysql://…`, `mariadb://…` or `sqlite:<path>`. */
  url: url(required),
  tablePrefix: sqlName('table prefix').default('surety_'),
  /** PostgreSQL schema. */
  schema: sqlName('schema name').optional(),
});

/** The one database of a service: `database: { url, tablePrefix?, schema? }`. */
export const databaseSchema = z.strictObject(fields('is required (database.url, SURETY_DATABASE_URL or --database)'));

export const DATABASE_NAME_RULE =
  'must be a database name: a letter, then letters, digits, _ or -, at most 40 characters';

const isMapping = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Several databases by name, `databases: { orders: { url }, billing: { url } }`; the order is the
 * console's display order and the first is the default of commands that act on one.
 */
export const databasesSchema = z
  .record(z.string(), z.strictObject(fields('is required (postgres://…, mysql://…, mariadb://… or sqlite:<path>)')))
  .check(
    // Names are checked even when an entry has other problems, so every mistake is reported at once.
    z.superRefine(
      (databases: Record<string, unknown>, ctx) => {
        const names = Object.keys(databases);
        if (names.length === 0) ctx.addIssue({ code: 'custom', message: 'must name at least one database' });
        for (const name of names) {
          if (!STORE_NAME.test(name))
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: `${DATABASE_NAME_RULE} (got ${JSON.stringify(name)})`,
            });
        }
      },
      { when: (payload) => isMapping(payload.value) },
    ),
  );

export type DatabaseConfig = z.output<typeof databaseSchema>;
