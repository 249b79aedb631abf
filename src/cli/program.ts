import { Command } from 'commander';
import { ENV_VARIABLES } from '../config/env.js';
import { registerAudit } from './commands/audit.js';
import { registerDlq } from './commands/dlq.js';
import { registerDoctor } from './commands/doctor.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOutbox } from './commands/outbox.js';
import { registerStart } from './commands/start.js';
import type { CommandState } from './commands/state.js';
import type { CliIo } from './io.js';
import { packageVersion } from './version.js';

const ENV_HELP = `
Environment (overrides the config file; flags override both):
  SURETY_CONFIG${' '.repeat(16)}config file
${ENV_VARIABLES.map((v) => `  ${v.name.padEnd(29)}${v.path}: ${v.description}`).join('\n')}

Exit codes: 0 done, 1 could not be done, 2 bad usage or config (nothing changed);
surety doctor: 3 warnings, 4 a failure found. With --json, an error is one JSON line on
stderr: {"error":{"code":"SURETY_...","message":"..."}}.
`;

/** The `surety` command tree. A new one per run: commander keeps parsed values on it. */
export function createProgram(io: CliIo, state: CommandState, errors: string[]): Command {
  const program = new Command('surety')
    .description('Reliable messaging operations: migrate, run, diagnose, and act on stuck messages.')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out.write(s),
      writeErr: (s) => io.err.write(s),
      // Errors are collected and printed by main, with the exit code they deserve.
      outputError: (s) => errors.push(s.trim()),
    })
    .version(packageVersion(), '-V, --version', 'print the version of surety')
    .showSuggestionAfterError(true)
    .addHelpText('after', ENV_HELP);
  registerMigrate(program, io);
  registerStart(program, io, state);
  registerDoctor(program, io, state);
  registerDlq(program, io, state);
  registerOutbox(program, io, state);
  registerAudit(program, io);
  return program;
}
