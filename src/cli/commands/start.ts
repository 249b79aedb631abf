import type { Command } from 'commander';
import { ConfigError } from '../../config/config-error.js';
import { defaultLogger } from '../../core/default-logger.js';
import { UsageError } from '../cli-errors.js';
import { configuredDatabases } from '../../config/databases.js';
import {
  closeStores,
  loadCliConfig,
  namedError,
  openStores,
  withCommonOptions,
  type CommonOptions,
} from '../context.js';
import type { CliIo } from '../io.js';
import { startRuntime } from '../start/runtime.js';
import type { CommandState } from './state.js';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * `surety start`: relay, replayer and console from the config, over every configured database; a
 * graceful stop on SIGINT or SIGTERM.
 */
export function registerStart(program: Command, io: CliIo, _state: CommandState): void {
  withCommonOptions(
    program
      .command('start')
      .description('run the relay, the replayer and the console the config enables, until SIGINT or SIGTERM'),
    'none',
  )
    .option('--migrate', 'create or upgrade the tables first')
    .action(async (o: CommonOptions & { migrate?: boolean }) => {
      const { config } = await loadCliConfig(o, io);
      if (!config.relay.enabled && !config.replayer.enabled && !config.console.enabled)
        throw new UsageError('nothing to start: enable relay, replayer or console in the config');
      if (config.relay.enabled && !config.transport)
        throw new ConfigError([
          { path: 'transport', message: 'is required when relay.enabled is true (rabbitmq or embedded)' },
        ]);
      // A signal during start-up must still lead to a clean stop, so listen before starting.
      let signalled: (signal: string) => void = () => undefined;
      const stopRequested = new Promise<string>((resolve) => (signalled = resolve));
      const onSignal = (signal: NodeJS.Signals) => signalled(signal);
      for (const s of SIGNALS) process.on(s, onSignal);
      const stores = await openStores(config, configuredDatabases(config), { create: !!o.migrate });
      try {
        for (const { name, store } of o.migrate ? stores : []) {
          await store.migrate().catch((err: unknown) => Promise.reject(namedError(config, name, err)));
        }
        const runtime = await startRuntime(config, stores, defaultLogger('surety'));
        const lines = runtime.started.map((s) => `  ${s}`).join('\n');
        io.out.write(`surety started (pid ${process.pid}):\n${lines}\n`);
        const signal = await stopRequested;
        io.out.write(`surety stopping (${signal})...\n`);
        await runtime.stop();
        io.out.write('surety stopped\n');
      } finally {
        for (const s of SIGNALS) process.removeListener(s, onSignal);
        await closeStores(stores);
      }
    });
}
