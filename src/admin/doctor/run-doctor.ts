import { SuretyError } from '../../core/errors.js';
import { brokerChecks } from './broker-checks.js';
import { consumerChecks } from './consumer-checks.js';
import { firstLine } from './format.js';
import { producerChecks } from './producer-checks.js';
import { resolveThresholds, type DoctorThresholds } from './thresholds.js';
import type { DoctorCheck, DoctorInput, DoctorReport, DoctorReads } from './types.js';
import { verdictOf } from './verdict.js';

/**
 * Checks the three places a message can be lost — producer (outbox and relays), broker (queues and
 * risky settings) and consumer (dead letters, replay leases, inbox) — and ends with one verdict
 * and the next step. Read-only: it changes nothing anywhere. A database that fails its reads is a
 * finding too (`producer.database`, `consumer.database`), not an error.
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
  const [[producer, consumer], broker] = await Promise.all([
    databaseSide(input.store.admin, t, now),
    brokerChecks(input.probe, input.knownQueues ?? [], facts, t),
  ]);
  const checks = [...producer, ...broker, ...consumer];
  return { at: now, checks, verdict: verdictOf(checks) };
}

async function databaseSide(
  store: DoctorReads,
  t: DoctorThresholds,
  now: number,
): Promise<[DoctorCheck[], DoctorCheck[]]> {
  try {
    const overview = await store.overview(now);
    return await Promise.all([producerChecks(store, overview, t, now), consumerChecks(store, overview, t, now)]);
  } catch (err) {
    // The database is what the doctor reads: when it fails, that is the finding.
    if (!isDatabaseFailure(err)) throw err;
    return databaseChecks(err);
  }
}

/** A database that does not answer, cannot be opened, or holds no Surety tables: a finding, not an error. */
export function isDatabaseFailure(err: unknown): err is SuretyError {
  return err instanceof SuretyError && (err.code === 'SURETY_STORE_FAILED' || err.code === 'SURETY_NOT_MIGRATED');
}

/** The producer's and the consumer's side of a database that does not answer (or has no tables). */
function databaseChecks(err: SuretyError): [DoctorCheck[], DoctorCheck[]] {
  const error = firstLine(err.message);
  const missing = err.code === 'SURETY_NOT_MIGRATED';
  const check = (place: 'producer' | 'consumer', what: string): DoctorCheck => ({
    id: `${place}.database`,
    place,
    level: 'fail',
    message: `${missing ? 'the database has no Surety tables' : 'the database is unreachable'}: ${error} — ${what} could not be checked`,
    facts: { error },
    nextStep: missing
      ? 'create the tables with `surety migrate` (or point the config at the migrated database), then run the doctor again'
      : 'check that the database is up and reachable from here (the URL, network, credentials), then run the doctor again',
  });
  return [[check('producer', 'the outbox and the relays')], [check('consumer', 'the dead letters and the inbox')]];
}
