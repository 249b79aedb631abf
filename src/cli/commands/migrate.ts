import type { Command } from 'commander';
import { redact } from '../../stores/open-store.js';
import { loadCliConfig, openStore, withCommonOptions, type CommonOptions } from '../context.js';
import { writeJson, type CliIo } from '../io.js';

/** `surety migrate`: creates or upgrades Surety's tables; idempotent, safe from several processes. */
export function registerMigrate(program: Command, io: CliIo): void {
  withCommonOptions(program.command('migrate').description("create or upgrade Surety's tables (idempotent)")).action(
    async (o: CommonOptions) => {
      const { config } = await loadCliConfig(o, io);
      const store = await openStore(config);
      try {
        await store.migrate();
      } finally {
        await store.close();
      }
      const url = redact(config.database.url);
      if (o.json)
        writeJson(io, {
          command: 'migrate',
          database: url,
          dialect: store.dialect,
          table: store.outboxTable,
          ok: true,
        });
      else io.out.write(`migrated ${store.dialect} (${url}): ${store.outboxTable} is up to date\n`);
    },
  );
}
