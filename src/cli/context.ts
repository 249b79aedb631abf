import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { AdminService } from '../admin/admin-service.js';
import { configuredDatabases, namesDatabases, type NamedDatabase } from '../config/databases.js';
import { loadConfig, type LoadedConfig } from '../config/load-config.js';
import type { SuretyConfig } from '../config/schema.js';
import type { Actor } from '../ports/admin-store.js';
import type { Store } from '../ports/store.js';
import { openStore as openStoreByUrl } from '../stores/open-store.js';
import { DatabaseError, UsageError } from './cli-errors.js';
import type { CliIo } from './io.js';

/** A store the CLI opens, with every concern. */
export type SuretyStore = Store;

export interface CommonOptions {
  readonly config?: string;
  readonly database?: string;
  readonly schema?: string;
  readonly tablePrefix?: string;
  /** One of the config's `databases`, by name. */
  readonly store?: string;
  readonly json?: boolean;
}

/**
 * How a command treats the config's databases: acts on `one` (the first unless `--store` names
 * another), on `all` (unless `--store` names one), or takes no `--store` at all.
 */
export type StoreChoice = 'one' | 'all' | 'none';

const STORE_HELP: Record<Exclude<StoreChoice, 'none'>, string> = {
  one: "which of the config's databases to act on (default: the first)",
  all: "only this one of the config's databases (default: all of them)",
};

/** The options every command that reads the database takes. */
export function withCommonOptions(cmd: Command, stores: StoreChoice = 'one'): Command {
  cmd
    .option('-c, --config <file>', 'config file, JSON or YAML (env SURETY_CONFIG)')
    .option('--database <url>', 'postgres://…, mysql://…, mariadb://… or sqlite:<path> (env SURETY_DATABASE_URL)')
    .option('--schema <name>', 'PostgreSQL schema (env SURETY_DATABASE_SCHEMA)')
    .option('--table-prefix <prefix>', "prefix of Surety's tables (default surety_)");
  if (stores !== 'none') cmd.option('--store <name>', STORE_HELP[stores]);
  return cmd.option('--json', 'machine-readable output, one JSON document');
}

/** Config file + environment + flags (flags win). */
export function loadCliConfig(opts: CommonOptions, io: CliIo): Promise<LoadedConfig> {
  return loadConfig({
    ...(opts.config ? { file: opts.config } : {}),
    env: io.env,
    overrides: [
      { path: 'database.url', value: opts.database, source: '--database' },
      { path: 'database.schema', value: opts.schema, source: '--schema' },
      { path: 'database.tablePrefix', value: opts.tablePrefix, source: '--table-prefix' },
    ],
  });
}

/**
 * The databases a command acts on: `--store` names one of the config's databases (exit 2 naming
 * the allowed ones otherwise); without it, the first (`one`) or all of them (`all`).
 */
export function selectDatabases(
  config: SuretyConfig,
  flag: string | undefined,
  choice: Exclude<StoreChoice, 'none'>,
): NamedDatabase[] {
  const all = configuredDatabases(config);
  if (flag === undefined) return choice === 'one' ? all.slice(0, 1) : [...all];
  const found = all.find((d) => d.name === flag);
  if (!found) {
    const shown = JSON.stringify(flag.length > 40 ? `${flag.slice(0, 40)}...` : flag);
    throw new UsageError(`--store must be one of ${all.map((d) => d.name).join(', ')} (got ${shown})`);
  }
  return [found];
}

/** A store opened for one of the config's databases. */
export interface NamedStore {
  readonly name: string;
  readonly store: SuretyStore;
}

/** How a command opens its databases. */
export interface OpenOptions {
  /**
   * Whether it may create a SQLite file (only `migrate` and `start --migrate`): every other command
   * opens only a database that is there and migrated, so a mistyped path creates nothing.
   */
  readonly create?: boolean;
}

export async function openStore(database: NamedDatabase, options: OpenOptions = {}): Promise<SuretyStore> {
  const { url, tablePrefix, schema } = database;
  const store = await openStoreByUrl({ url, tablePrefix, ...(schema ? { schema } : {}), create: !!options.create });
  return store as SuretyStore;
}

/**
 * Opens the given databases in order. If one cannot be opened, those already open are closed and
 * the error names the database (when the config names its databases).
 */
export async function openStores(
  config: SuretyConfig,
  databases: readonly NamedDatabase[],
  options: OpenOptions = {},
): Promise<NamedStore[]> {
  const opened: NamedStore[] = [];
  for (const database of databases) {
    try {
      opened.push({ name: database.name, store: await openStore(database, options) });
    } catch (err) {
      await closeStores(opened);
      throw namedError(config, database.name, err);
    }
  }
  return opened;
}

/** Closes every store; one that fails to close does not keep the others open. */
export async function closeStores(stores: readonly NamedStore[]): Promise<void> {
  await Promise.allSettled(stores.map((s) => s.store.close()));
}

/** With `databases`, an error says which database it came from. */
export function namedError(config: SuretyConfig, database: string, err: unknown): unknown {
  return namesDatabases(config) ? new DatabaseError(database, err) : err;
}

/** The operator the audit log names for CLI actions: `cli:<os user>`. */
export function cliActor(env: CliIo['env']): Actor {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = env.USER ?? env.USERNAME ?? 'unknown';
  }
  return { name: `cli:${user}`.slice(0, 64), role: 'operator' };
}

export interface AdminContext {
  readonly config: SuretyConfig;
  readonly store: SuretyStore;
  readonly admin: AdminService;
  readonly actor: Actor;
}

/**
 * Loads the config, opens the chosen database's store (`--store`, else the first) and the admin
 * service, runs `work`, and closes the store.
 */
export async function withAdmin<T>(
  opts: CommonOptions,
  io: CliIo,
  work: (ctx: AdminContext) => Promise<T>,
): Promise<T> {
  const { config } = await loadCliConfig(opts, io);
  const [database] = selectDatabases(config, opts.store, 'one');
  const [{ store }] = (await openStores(config, [database!])) as [NamedStore];
  try {
    return await work({ config, store, admin: adminFor(config, store), actor: cliActor(io.env) });
  } finally {
    await store.close();
  }
}

/** The admin service of one store, with the config's console settings. */
export function adminFor(config: SuretyConfig, store: SuretyStore): AdminService {
  return new AdminService({
    store,
    // A command's own output says what happened; the admin log lines are for servers.
    logger: null,
    allowEdit: config.console.allowEdit,
    inboxWindowMs: config.console.inboxWindowMs || undefined,
  });
}
