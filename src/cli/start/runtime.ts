import { namesDatabases } from '../../config/databases.js';
import type { SuretyConfig } from '../../config/schema.js';
import { ConfigError } from '../../config/config-error.js';
import { describeError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { Registry } from 'prom-client';
import type { Consumer } from '../../consumer/consumer.js';
import { ReplayJob } from '../../consumer/replay-job.js';
import { OutboxRelay } from '../../producer/outbox-relay.js';
import type { Transport } from '../../ports/transport.js';
import type { NamedStore } from '../context.js';
import { createDoctorRunner } from '../doctor-runner.js';
import { startConsole } from './console.js';
import { loadConsumers } from './load-consumers.js';

export interface Runtime {
  /** One line per running component, for the start banner. */
  readonly started: readonly string[];
  /** Stops everything, newest first; each step is attempted even if an earlier one fails. */
  stop(): Promise<void>;
}

/**
 * Starts what the config enables on the open stores of its databases: one console serving every
 * database (its /metrics covers everything started here), a relay per database in
 * `relay.databases` (default: all) sharing one transport, and the replayer with the store of
 * `replayer.database` (default: the first).
 */
export async function startRuntime(
  config: SuretyConfig,
  stores: readonly NamedStore[],
  logger: Logger,
): Promise<Runtime> {
  const stops: { name: string; stop: () => Promise<unknown> }[] = [];
  const started: string[] = [];
  const named = namesDatabases(config);
  const stop = async () => {
    for (const s of stops.reverse()) {
      try {
        await s.stop();
      } catch (err) {
        logger.warn({ component: s.name, err: describeError(err) }, 'stop failed');
      }
    }
  };
  // One registry for the console's /metrics, the relays and the replay jobs' consumers (their own
  // registries, from the module, are served beside it). The console registers its store-labelled
  // gauges first, so relays over several databases do not each claim the outbox gauges.
  const registry = new Registry();
  try {
    let consumers: readonly Consumer[] = [];
    if (config.replayer.enabled) {
      const chosen = stores.find((s) => s.name === config.replayer.database) ?? stores[0]!;
      const loaded = await loadConsumers(config.replayer.module!, { database: chosen.name, store: chosen.store });
      stops.push({ name: 'replayer module', stop: loaded.close });
      consumers = loaded.consumers;
    }
    if (config.console.enabled) {
      const doctor = await createDoctorRunner(config, stores);
      stops.push({ name: 'doctor', stop: () => doctor.close() });
      const registries = consumers.map((c) => c.metricsRegistry);
      const server = await startConsole(config, stores, () => doctor.run(), logger, { registry, registries });
      stops.push({ name: 'console', stop: () => server.close() });
      started.push(`console at ${server.url}`);
    }
    if (config.relay.enabled) {
      const transport = await openTransport(config, logger);
      stops.push({ name: 'transport', stop: () => transport.close() });
      const { enabled: _enabled, databases, ...relayOptions } = config.relay;
      for (const { name, store } of stores.filter((s) => !databases || databases.includes(s.name))) {
        const relayLogger = named ? withFields(logger, { database: name }) : logger;
        const relay = new OutboxRelay({ ...relayOptions, store, publisher: transport, logger: relayLogger, registry });
        await relay.start(); // writes its heartbeat row while it runs
        stops.push({ name: named ? `relay on ${name}` : 'relay', stop: () => relay.stop() });
        started.push(`relay ${relay.id}${named ? ` on ${name}` : ''} -> ${transport.name}`);
      }
    }
    const { enabled: _e, module: _m, database: _d, ...replayOptions } = config.replayer;
    for (const consumer of consumers) {
      const job = new ReplayJob(consumer, replayOptions);
      job.start();
      stops.push({ name: `replayer ${consumer.group}`, stop: () => job.stop() });
      started.push(`replayer for group ${consumer.group} (${replayOptions.ratePerSecond}/s)`);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { started, stop };
}

/** A logger that adds `fields` to every entry, so each relay's lines name its database. */
function withFields(logger: Logger, fields: object): Logger {
  return {
    debug: (obj, msg) => logger.debug({ ...fields, ...obj }, msg),
    info: (obj, msg) => logger.info({ ...fields, ...obj }, msg),
    warn: (obj, msg) => logger.warn({ ...fields, ...obj }, msg),
    error: (obj, msg) => logger.error({ ...fields, ...obj }, msg),
  };
}

async function openTransport(config: SuretyConfig, logger: Logger): Promise<Transport> {
  const t = config.transport;
  if (!t) throw new ConfigError([{ path: 'transport', message: 'is required when relay.enabled is true' }]);
  if (t.kind === 'rabbitmq') {
    const { createRabbitMqTransport } = await import('../../transports/rabbitmq/index.js');
    return createRabbitMqTransport({ url: t.url!, exchange: t.exchange ?? 'surety', logger });
  }
  if (t.kind === 'kafka') {
    const { createKafkaTransport } = await import('../../transports/kafka/index.js');
    return createKafkaTransport({ brokers: t.brokers!, logger, ...defined({ clientId: t.clientId }) });
  }
  if (t.kind === 'redis') {
    const { createRedisStreamsTransport } = await import('../../transports/redis/index.js');
    return createRedisStreamsTransport({
      url: t.url as string,
      logger,
      ...defined({ prefix: t.prefix, maxLen: t.maxLen, maxAgeMs: t.maxAgeMs, claimIdleMs: t.claimIdleMs }),
      ...defined({ maxDeliveries: t.maxDeliveries }),
    });
  }
  if (t.kind === 'nats') {
    const { createNatsTransport } = await import('../../transports/nats/index.js');
    return createNatsTransport({
      url: t.url!,
      logger,
      ...defined({ subjectPrefix: t.subjectPrefix, ackWaitMs: t.ackWaitMs, maxDeliver: t.maxDeliver }),
    });
  }
  const { createEmbeddedTransport } = await import('../../transports/embedded/index.js');
  return createEmbeddedTransport({ path: t.path!, logger });
}

/** The entries whose value is set: transports refuse an option given as undefined where they have a default. */
function defined<T extends Record<string, unknown>>(options: T): Partial<{ [K in keyof T]: Exclude<T[K], undefined> }> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<{
    [K in keyof T]: Exclude<T[K], undefined>;
  }>;
}
