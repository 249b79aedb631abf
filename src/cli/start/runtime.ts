import type { SuretyConfig } from '../../config/schema.js';
import { ConfigError } from '../../config/config-error.js';
import { describeError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { ReplayJob } from '../../consumer/replay-job.js';
import { OutboxRelay } from '../../producer/outbox-relay.js';
import type { Transport } from '../../ports/transport.js';
import type { SuretyStore } from '../context.js';
import { createDoctorRunner } from '../doctor-runner.js';
import { startConsole } from './console.js';
import { loadConsumers } from './load-consumers.js';

export interface Runtime {
  /** One line per running component, for the start banner. */
  readonly started: readonly string[];
  /** Stops everything, newest first; each step is attempted even if an earlier one fails. */
  stop(): Promise<void>;
}

/** Starts what the config enables — relay, replayer, console — on an open store. */
export async function startRuntime(config: SuretyConfig, store: SuretyStore, logger: Logger): Promise<Runtime> {
  const stops: { name: string; stop: () => Promise<unknown> }[] = [];
  const started: string[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) {
      try {
        await s.stop();
      } catch (err) {
        logger.warn({ component: s.name, err: describeError(err) }, 'stop failed');
      }
    }
  };
  try {
    if (config.relay.enabled) {
      const transport = await openTransport(config, logger);
      stops.push({ name: 'transport', stop: () => transport.close() });
      const { enabled: _enabled, ...relayOptions } = config.relay;
      const relay = new OutboxRelay({ ...relayOptions, store, publisher: transport, logger });
      await relay.start(); // writes its heartbeat row while it runs
      stops.push({ name: 'relay', stop: () => relay.stop() });
      started.push(`relay ${relay.id} -> ${transport.name}`);
    }
    if (config.replayer.enabled) {
      const { consumers, close } = await loadConsumers(config.replayer.module!);
      stops.push({ name: 'replayer module', stop: close });
      const { enabled: _e, module: _m, ...replayOptions } = config.replayer;
      for (const consumer of consumers) {
        const job = new ReplayJob(consumer, replayOptions);
        job.start();
        stops.push({ name: `replayer ${consumer.group}`, stop: () => job.stop() });
        started.push(`replayer for group ${consumer.group} (${replayOptions.ratePerSecond}/s)`);
      }
    }
    if (config.console.enabled) {
      const doctor = await createDoctorRunner(config, store);
      stops.push({ name: 'doctor', stop: () => doctor.close() });
      const server = await startConsole(config, store, () => doctor.run(), logger);
      stops.push({ name: 'console', stop: () => server.close() });
      started.push(`console at ${server.url}`);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { started, stop };
}

async function openTransport(config: SuretyConfig, logger: Logger): Promise<Transport> {
  const t = config.transport;
  if (!t) throw new ConfigError([{ path: 'transport', message: 'is required when relay.enabled is true' }]);
  if (t.kind === 'rabbitmq') {
    const { createRabbitMqTransport } = await import('../../transports/rabbitmq/index.js');
    return createRabbitMqTransport({ url: t.url!, exchange: t.exchange, logger });
  }
  const { createEmbeddedTransport } = await import('../../transports/embedded/index.js');
  return createEmbeddedTransport({ path: t.path!, logger });
}
