import { brokerChecks } from './broker-checks.js';
import { consumerChecks } from './consumer-checks.js';
import { producerChecks } from './producer-checks.js';
import { resolveThresholds } from './thresholds.js';
import type { DoctorInput, DoctorReport } from './types.js';
import { verdictOf } from './verdict.js';

/**
 * Checks the three places a message can be lost — producer (outbox and relays), broker (queues and
 * risky settings) and consumer (dead letters, replay leases, inbox) — and ends with one verdict
 * and the next step. Read-only: it changes nothing anywhere.
 * @example
 * const report = await runDoctor({ store, probe, knownQueues: ['billing'] });
 * console.log(report.verdict.message); // "broker: billing has 1,204 ready and 0 consumers — the consumer is down"
 */
export async function runDoctor(input: DoctorInput): Promise<DoctorReport> {
  const now = input.now ?? Date.now();
  const t = resolveThresholds(input.thresholds);
  const facts = {
    persistentPublishing: input.facts?.persistentPublishing ?? true,
    retryStrategy: input.facts?.retryStrategy ?? 'dead-letter-table',
  } as const;
  const overview = await input.store.overview(now);
  const [producer, broker, consumer] = await Promise.all([
    producerChecks(input.store, overview, t, now),
    brokerChecks(input.probe, input.knownQueues ?? [], facts, t),
    consumerChecks(input.store, overview, t, now),
  ]);
  const checks = [...producer, ...broker, ...consumer];
  return { at: now, checks, verdict: verdictOf(checks) };
}
