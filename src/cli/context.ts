import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { AdminService } from '../admin/admin-service.js';
import { loadConfig, type LoadedConfig } from '../config/load-config.js';
import type { SuretyConfig } from '../config/schema.js';
import type { Actor, AdminStore } from '../ports/admin-store.js';
import type { ConsumerStore } from '../ports/consumer-store.js';
import type { OutboxStore } from '../ports/outbox-store.js';
import { openOutboxStore } from '../stores/open-store.js';
import type { CliIo } from './io.js';

/** Every Surety store implements all three concerns. */
export type SuretyStore = OutboxStore & ConsumerStore & AdminStore;

export interface CommonOptions {
  readonly config?: string;
  readonly database?: string;
  readonly schema?: string;
  readonly tablePrefix?: string;
  readonly json?: boolean;
}

/** The options every command that reads the database takes. */
export function withCommonOptions(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'config file, JSON or YAML (env SURETY_CONFIG)')
    .option('--database <url>', 'postgres://…, mysql://…, mariadb://… or sqlite:<path> (env SURETY_DATABASE_URL)')
    .option('--schema <name>', 'PostgreSQL schema (env SURETY_DATABASE_SCHEMA)')
    .option('--table-prefix <prefix>', "prefix of Surety's tables (default surety_)")
    .option('--json', 'machine-readable output, one JSON document');
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

export async function openStore(config: SuretyConfig): Promise<SuretyStore> {
  const { url, tablePrefix, schema } = config.database;
  const store = await openOutboxStore({ url, tablePrefix, ...(schema ? { schema } : {}) });
  return store as SuretyStore;
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

/** Loads the config, opens the store and the admin service, runs `work`, and closes the store. */
export async function withAdmin<T>(
  opts: CommonOptions,
  io: CliIo,
  work: (ctx: AdminContext) => Promise<T>,
): Promise<T> {
  const { config } = await loadCliConfig(opts, io);
  const store = await openStore(config);
  try {
    const admin = new AdminService({
      store,
      allowEdit: config.console.allowEdit,
      inboxWindowMs: config.console.inboxWindowMs || undefined,
    });
    return await work({ config, store, admin, actor: cliActor(io.env) });
  } finally {
    await store.close();
  }
}
