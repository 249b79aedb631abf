import type { DoctorCheck, DoctorReport } from './types.js';
import { verdictOf } from './verdict.js';

/** A check of a report that spans several databases: producer and consumer checks name theirs. */
export interface StoreDoctorCheck extends DoctorCheck {
  /** The database the check read; absent on broker checks, which are the same for every database. */
  readonly store?: string;
}

export interface StoreDoctorReport extends DoctorReport {
  readonly checks: readonly StoreDoctorCheck[];
}

/**
 * One report from the reports of several databases that share a broker. Producer and consumer
 * checks are kept per database, their messages prefixed with its name; broker checks come from the
 * first report only (the broker is probed once). The verdict is the most upstream failure (else
 * warning) across all of them. A single report is returned as it is.
 * @example
 * const report = mergeDoctorReports([
 *   { store: 'orders', report: await runDoctor({ store: orders, probe }) },
 *   { store: 'billing', report: await runDoctor({ store: billing }) },
 * ]);
 * report.verdict.message; // "producer: orders: oldest pending message is 14 min old and no relay has claimed …"
 */
export function mergeDoctorReports(parts: readonly { store: string; report: DoctorReport }[]): StoreDoctorReport {
  if (parts.length === 0) throw new RangeError('mergeDoctorReports needs at least one report');
  if (parts.length === 1) return parts[0]!.report;
  const named = (place: DoctorCheck['place']) =>
    parts.flatMap(({ store, report }) =>
      report.checks
        .filter((c) => c.place === place)
        .map((c): StoreDoctorCheck => ({ ...c, store, message: `${store}: ${c.message}` })),
    );
  const broker = parts[0]!.report.checks.filter((c) => c.place === 'broker');
  const checks = [...named('producer'), ...broker, ...named('consumer')];
  return { at: parts[0]!.report.at, checks, verdict: verdictOf(checks) };
}
