import { escapeControlChars } from '../../core/control-chars.js';
import type { Command } from 'commander';
import type { DoctorCheck, DoctorReport, DoctorStore } from '../../admin/doctor/index.js';
import type { SuretyError } from '../../core/errors.js';
import { isDatabaseFailure } from '../../admin/doctor/index.js';
import { EXIT, UsageError } from '../cli-errors.js';
import {
  closeStores,
  loadCliConfig,
  openStore,
  selectDatabases,
  withCommonOptions,
  type CommonOptions,
  type NamedStore,
} from '../context.js';
import { createDoctorRunner, type DoctorDatabase } from '../doctor-runner.js';
import { writeJson, type CliIo } from '../io.js';
import type { CommandState } from './state.js';

const MARK: Record<DoctorCheck['level'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' };

/**
 * `surety doctor`: exit 0 healthy, 3 warnings, 4 a failure found, 1 when it could not run. Checks
 * every configured database (or the one `--store` names) and merges their checks.
 */
export function registerDoctor(program: Command, io: CliIo, state: CommandState): void {
  withCommonOptions(
    program
      .command('doctor')
      .description('check producer, broker and consumer; end with a verdict and the next step')
      .addHelpText(
        'after',
        '\nExit codes: 0 healthy, 3 warnings, 4 a failure found (also a database that does not answer), 1 the doctor could not run, 2 bad usage.',
      ),
    'all',
  )
    .option('--queue <name...>', 'also check these queues (besides transport.queues)')
    .action(async (o: CommonOptions & { queue?: string[] }) => {
      for (const q of o.queue ?? []) if (!q.trim()) throw new UsageError('--queue must not be empty');
      const { config } = await loadCliConfig(o, io);
      const databases = selectDatabases(config, o.store, 'all');
      const stores: NamedStore[] = [];
      try {
        // A database that cannot be opened is a finding of the report, like one that does not answer.
        const checked: DoctorDatabase[] = [];
        for (const database of databases) {
          try {
            const store = await openStore(database);
            stores.push({ name: database.name, store });
            checked.push({ name: database.name, store: store as DoctorStore });
          } catch (err) {
            if (!isDatabaseFailure(err)) throw err;
            checked.push({ name: database.name, store: unreachable(err) });
          }
        }
        const doctor = await createDoctorRunner(config, checked, o.queue ?? []);
        try {
          const report = await doctor.run();
          if (o.json) writeJson(io, report);
          else io.out.write(renderReport(report));
          state.exitCode =
            report.verdict.level === 'fail' ? EXIT.doctorFail : report.verdict.level === 'warn' ? EXIT.doctorWarn : 0;
        } finally {
          await doctor.close();
        }
      } finally {
        await closeStores(stores);
      }
    });
}

/** A store whose every read fails as opening it did: the doctor reports the database unreachable. */
function unreachable(err: SuretyError): DoctorStore {
  const fail = () => Promise.reject(err);
  return { admin: { overview: fail, listOutbox: fail, listDeadLetters: fail } };
}

/** Checks grouped by place, then the verdict. */
export function renderReport(report: DoctorReport): string {
  const lines: string[] = [];
  for (const place of ['producer', 'broker', 'consumer'] as const) {
    const checks = report.checks.filter((c) => c.place === place);
    if (checks.length === 0) {
      lines.push(place, '  (not checked: no broker configured)', '');
      continue;
    }
    lines.push(place);
    for (const c of checks) {
      lines.push(`  ${MARK[c.level]}  ${c.message}`);
      if (c.nextStep && c.level !== 'ok') lines.push(`        next: ${c.nextStep}`);
    }
    lines.push('');
  }
  lines.push(`verdict: ${report.verdict.message}`, `next step: ${report.verdict.nextStep}`, '');
  // Queue names and broker text come from outside: no terminal control sequences.
  return escapeControlChars(lines.join('\n'), { keepNewlines: true });
}
