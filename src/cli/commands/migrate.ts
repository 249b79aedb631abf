import type { Command } from 'commander';
import { namesDatabases } from '../../config/databases.js';
import { redact } from '../../stores/open-store.js';
import {
  closeStores,
  loadCliConfig,
  namedError,
  openStores,
  selectDatabases,
  withCommonOptions,
  type CommonOptions,
  type NamedStore,
} from '../context.js';
import { writeJson, type CliIo } from '../io.js';

interface Migrated {
  readonly name: string;
  readonly database: string;
  readonly dialect: string;
  readonly table: string;
}

/**
 * `surety migrate`: creates or upgrades Surety's tables in every configured database (or the one
 * `--store` names); idempotent, safe from several processes.
 */
export function registerMigrate(program: Command, io: CliIo): void {
  withCommonOptions(
    program.command('migrate').description("create or upgrade Surety's tables (idempotent)"),
    'all',
  ).action(async (o: CommonOptions) => {
    const { config } = await loadCliConfig(o, io);
    const databases = selectDatabases(config, o.store, 'all');
    const done: Migrated[] = [];
    // One at a time, so a failure names its database and those before it stay migrated.
    for (const database of databases) {
      const [{ store }] = (await openStores(config, [database], { create: true })) as [NamedStore];
      try {
        await store.migrate();
      } catch (err) {
        throw namedError(config, database.name, err);
      } finally {
        await closeStores([{ name: database.name, store }]);
      }
      done.push({
        name: database.name,
        database: redact(database.url),
        dialect: store.dialect,
        table: store.outbox.outboxTable,
      });
    }
    if (!namesDatabases(config)) {
      const [m] = done as [Migrated];
      if (o.json)
        writeJson(io, { command: 'migrate', database: m.database, dialect: m.dialect, table: m.table, ok: true });
      else io.out.write(`migrated ${m.dialect} (${m.database}): ${m.table} is up to date\n`);
      return;
    }
    if (o.json) return writeJson(io, { command: 'migrate', ok: true, databases: done });
    for (const m of done) io.out.write(`migrated ${m.name}: ${m.dialect} (${m.database}): ${m.table} is up to date\n`);
  });
}
