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

/** Options of {@link mergeDoctorReports}. */
export interface MergeOptions {
  /**
   * Whether the databases have names commands take (`--store`). Default: when there are several.
   * With one database of a config that names its databases, its checks still say which one.
   */
  readonly named?: boolean;
}

/**
 * One report from the reports of several databases that share a broker. Producer and consumer
 * checks are kept per database, their messages prefixed with its name, and every `surety` command
 * they suggest gets `--store <name>`, so it acts where the finding is; broker checks come from the
 * first report only (the broker is probed once). The verdict is the most upstream failure (else
 * warning) across all of them.
 * @example
 * const report = mergeDoctorReports([
 *   { store: 'orders', report: await runDoctor({ store: orders, probe }) },
 *   { store: 'billing', report: await runDoctor({ store: billing }) },
 * ]);
 * report.verdict.message; // "producer: orders: oldest pending message is 14 min old and no relay has claimed …"
 * report.verdict.nextStep; // "fix the cause, then `surety dlq replay --all-matching --status dead --store billing` …"
 */
export function mergeDoctorReports(
  parts: readonly { store: string; report: DoctorReport }[],
  options: MergeOptions = {},
): StoreDoctorReport {
  if (parts.length === 0) throw new RangeError('mergeDoctorReports needs at least one report');
  const named = options.named ?? parts.length > 1;
  if (!named) return parts[0]!.report;
  const perStore = (place: DoctorCheck['place']) =>
    parts.flatMap(({ store, report }) =>
      report.checks
        .filter((c) => c.place === place)
        .map((c): StoreDoctorCheck => ({
          ...c,
          store,
          message: `${store}: ${c.message}`,
          ...(c.nextStep === undefined ? {} : { nextStep: withStoreFlag(c.nextStep, store) }),
        })),
    );
  const broker = parts[0]!.report.checks.filter((c) => c.place === 'broker');
  const checks = [...perStore('producer'), ...broker, ...perStore('consumer')];
  return { at: parts[0]!.report.at, checks, verdict: verdictOf(checks) };
}

/** Commands that act on one database; `surety start` and `surety doctor` take no `--store` of one. */
const STORE_COMMAND = /`(surety (?!start\b|doctor\b)[^`]*)`/g;

/** Every suggested command (in backticks) that acts on a database, with `--store <store>`. */
export function withStoreFlag(text: string, store: string): string {
  return text.replace(STORE_COMMAND, (_match, command: string) => `\`${command} --store ${store}\``);
}
