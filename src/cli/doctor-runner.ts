import { DEFAULT_STORE_NAME } from '../ports/store-name.js';
import { mergeDoctorReports, runDoctor, type DoctorStore, type StoreDoctorReport } from '../admin/doctor/index.js';
import { namesDatabases } from '../config/databases.js';
import type { SuretyConfig } from '../config/schema.js';
import type { BrokerProbe } from '../ports/broker-probe.js';
import { namedError } from './context.js';

/** A database the doctor reads, by its config name. */
export interface DoctorDatabase {
  readonly name: string;
  readonly store: DoctorStore;
}

export interface DoctorRunner {
  /** A fresh report. */
  run(now?: number): Promise<StoreDoctorReport>;
  close(): Promise<void>;
}

/**
 * The doctor wired from the config: one store, or several named ones, a probe of the configured
 * broker and the known queues. Over several databases each is checked and the reports are merged:
 * producer and consumer checks name their database (and the commands they suggest take its
 * `--store`), the broker is probed once, and the verdict is the most upstream failure across all of
 * them. A database that does not answer is a failing check of its own, not an error.
 * @example
 * const doctor = await createDoctorRunner(config, [{ name: 'orders', store: orders }, { name: 'billing', store: billing }]);
 * (await doctor.run()).verdict.message; // "producer: orders: oldest pending message is 14 min old …"
 */
export async function createDoctorRunner(
  config: SuretyConfig,
  stores: DoctorStore | readonly DoctorDatabase[],
  extraQueues: readonly string[] = [],
): Promise<DoctorRunner> {
  const list: readonly DoctorDatabase[] = Array.isArray(stores)
    ? (stores as readonly DoctorDatabase[])
    : [{ name: DEFAULT_STORE_NAME, store: stores as DoctorStore }];
  const probe = await probeFor(config);
  const { retryStrategy, ...thresholds } = config.doctor;
  const knownQueues = [...new Set([...(config.transport?.queues ?? []), ...extraQueues])];
  const facts = { persistentPublishing: persistentPublishing(config), retryStrategy };
  return {
    async run(now) {
      const at = now ?? Date.now();
      const parts = await Promise.all(
        list.map(async ({ name, store }, i) => {
          try {
            // The broker is the same for every database: only the first run probes it.
            const report = await runDoctor({
              store,
              ...(i === 0 && probe ? { probe } : {}),
              knownQueues,
              facts,
              thresholds,
              now: at,
            });
            return { store: name, report };
          } catch (err) {
            throw namedError(config, name, err);
          }
        }),
      );
      return mergeDoctorReports(parts, { named: list.length > 1 || namesDatabases(config) });
    },
    close: async () => probe?.close(),
  };
}

async function probeFor(config: SuretyConfig): Promise<BrokerProbe | undefined> {
  const t = config.transport;
  if (t?.kind === 'embedded') {
    if (!t.path) return undefined;
    const { createEmbeddedQueueProbe } = await import('../transports/embedded/queue-probe.js');
    return createEmbeddedQueueProbe({ path: t.path });
  }
  if (t?.kind === 'kafka' && t.brokers) {
    const { createKafkaQueueProbe } = await import('../transports/kafka/queue-probe.js');
    return createKafkaQueueProbe({ brokers: t.brokers });
  }
  if (t?.kind === 'redis' && typeof t.url === 'string') {
    const { createRedisStreamProbe } = await import('../transports/redis/queue-probe.js');
    return createRedisStreamProbe({
      url: t.url,
      ...(t.prefix === undefined ? {} : { prefix: t.prefix }),
      ...(t.maxLen === undefined ? {} : { maxLen: t.maxLen }),
      ...(t.maxAgeMs === undefined ? {} : { maxAgeMs: t.maxAgeMs }),
    });
  }
  if (t?.kind === 'nats' && t.url) {
    const { createNatsQueueProbe } = await import('../transports/nats/queue-probe.js');
    return createNatsQueueProbe({ url: t.url });
  }
  if (t?.kind !== 'rabbitmq' || !t.url) return undefined;
  const { createRabbitMqQueueProbe } = await import('../transports/rabbitmq/queue-probe.js');
  return createRabbitMqQueueProbe({ url: t.url, ...(t.managementUrl ? { managementUrl: t.managementUrl } : {}) });
}

/** Every row of the embedded log is written to disk before its publish resolves: there is no transient mode. */
function persistentPublishing(config: SuretyConfig): boolean {
  if (config.transport?.kind === 'embedded') return true;
  return config.transport?.persistent ?? true;
}
