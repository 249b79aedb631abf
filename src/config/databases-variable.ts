import { STORE_NAME } from '../ports/store-name.js';
import { ConfigError } from './config-error.js';
import { DATABASE_NAME_RULE } from './database-schema.js';

const EXAMPLE = 'orders=postgres://…,billing=sqlite:billing.sqlite';

/**
 * Parses `SURETY_DATABASES`: comma-separated `name=url` entries, in order. An entry starts after a
 * comma that is followed by `<name>=`, so a comma inside a URL (allowed in a password) stays in it.
 * Errors never show an entry's text: it may hold a password.
 * @example
 * parseDatabasesVariable('orders=postgres://db/orders,billing=sqlite:billing.sqlite');
 * // { orders: { url: 'postgres://db/orders' }, billing: { url: 'sqlite:billing.sqlite' } }
 */
export function parseDatabasesVariable(text: string, variable: string): Record<string, { url: string }> {
  const entries = text
    .split(/,(?=\s*[^,=\s/:@]+\s*=)/)
    .map((e) => e.trim())
    .filter(Boolean);
  const out: Record<string, { url: string }> = {};
  const fail = (message: string) => new ConfigError([{ path: 'databases', from: variable, message }]);
  entries.forEach((entry, i) => {
    const at = entry.indexOf('=');
    const name = entry.slice(0, Math.max(at, 0)).trim();
    const url = entry.slice(at + 1).trim();
    if (at <= 0 || !name || !url) throw fail(`entry ${i + 1} of ${entries.length} must be name=url (e.g. ${EXAMPLE})`);
    // Not echoed either: a URL without a name would put its password before the first "=".
    if (!STORE_NAME.test(name))
      throw fail(`entry ${i + 1} of ${entries.length}: the name before "=" ${DATABASE_NAME_RULE}`);
    if (Object.hasOwn(out, name)) throw fail(`names the database "${name}" twice`);
    out[name] = { url };
  });
  return out;
}
