import { runDoctor, type DoctorReport } from '../admin/doctor/index.js';
import type { SuretyConfig } from '../config/schema.js';
import type { BrokerProbe } from '../ports/broker-probe.js';
import type { SuretyStore } from './context.js';

export interface DoctorRunner {
  /** A fresh report. */
  run(now?: number): Promise<DoctorReport>;
  close(): Promise<void>;
}

/** The doctor wired from the config: the store, a probe of the configured broker, the known queues. */
export async function createDoctorRunner(
  config: SuretyConfig,
  store: SuretyStore,
  extraQueues: readonly string[] = [],
): Promise<DoctorRunner> {
  const probe = await probeFor(config);
  const { retryStrategy, ...thresholds } = config.doctor;
  const knownQueues = [...new Set([...(config.transport?.queues ?? []), ...extraQueues])];
  return {
    run: (now) =>
      runDoctor({
        store,
        ...(probe ? { probe } : {}),
        knownQueues,
        facts: { persistentPublishing: persistentPublishing(config), retryStrategy },
        thresholds,
        ...(now !== undefined ? { now } : {}),
      }),
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
  if (t?.kind !== 'rabbitmq' || !t.url) return undefined;
  const { createRabbitMqQueueProbe } = await import('../transports/rabbitmq/queue-probe.js');
  return createRabbitMqQueueProbe({ url: t.url, ...(t.managementUrl ? { managementUrl: t.managementUrl } : {}) });
}

/** Every row of the embedded log is written to disk before its publish resolves: there is no transient mode. */
function persistentPublishing(config: SuretyConfig): boolean {
  if (config.transport?.kind === 'embedded') return true;
  return config.transport?.persistent ?? true;
}
