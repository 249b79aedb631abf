import { DEFAULT_STORE_NAME } from '../ports/store-name.js';
import type { SuretyConfig } from './schema.js';

/** One configured database with its name: `default` for `database`, the key for `databases`. */
export interface NamedDatabase {
  readonly name: string;
  readonly url: string;
  readonly tablePrefix: string;
  readonly schema?: string;
}

/**
 * The config's databases in order (the first is the default), whichever form it uses.
 * @example
 * configuredDatabases(config).map((d) => d.name); // ['orders', 'billing'], or ['default'] for `database`
 */
export function configuredDatabases(config: Pick<SuretyConfig, 'database' | 'databases'>): readonly NamedDatabase[] {
  if (config.databases) return Object.entries(config.databases).map(([name, d]) => ({ name, ...d }));
  if (config.database) return [{ name: DEFAULT_STORE_NAME, ...config.database }];
  return [];
}

/** Whether the config names its databases (`databases`), so output should say which one it means. */
export function namesDatabases(config: Pick<SuretyConfig, 'databases'>): boolean {
  return config.databases !== undefined;
}
