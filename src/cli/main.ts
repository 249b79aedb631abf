import { CommanderError } from 'commander';
import { escapeControlChars } from '../core/control-chars.js';
import { ConfigError } from '../config/config-error.js';
import { SuretyError } from '../core/errors.js';
import { EXIT, exitFor, UsageError } from './cli-errors.js';
import { jsonLine, type CliIo } from './io.js';
import { createProgram } from './program.js';

export interface MainOptions {
  /** Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Show progress bars. Default: whether `err` is a terminal. */
  readonly isTTY?: boolean;
}

/**
 * Runs `surety <command>` and resolves with its exit code: 0 done, 1 could not be done, 2 bad
 * usage or config (nothing changed); `doctor` adds 3 (warnings) and 4 (a failure found).
 * @example
 * process.exitCode = await main(process.argv.slice(2));
 */
export async function main(
  argv: string[],
  out: Pick<NodeJS.WritableStream, 'write'> = process.stdout,
  err: Pick<NodeJS.WritableStream, 'write'> = process.stderr,
  options: MainOptions = {},
): Promise<number> {
  const io: CliIo = {
    out,
    err,
    isTTY: options.isTTY ?? Boolean((err as { isTTY?: boolean }).isTTY),
    env: options.env ?? process.env,
  };
  const state = { exitCode: EXIT.ok as number };
  const errors: string[] = [];
  const program = createProgram(io, state, errors);
  if (argv.length === 0) {
    err.write(program.helpInformation());
    return EXIT.usage;
  }
  // Scripts asking for --json get their error as JSON too (flags after `--` are arguments).
  const json = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length).includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return state.exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT.ok;
      // A command group without its subcommand: commander has printed the group's help.
      if (e.code === 'commander.help') return EXIT.usage;
      const message = commanderMessage(e, errors, program.commands, argv);
      if (json) writeJsonError(err, 'SURETY_INVALID_OPTION', message);
      else err.write(`surety: ${message}\n`);
      return EXIT.usage;
    }
    const { code, message } = exitFor(e);
    if (json) writeJsonError(err, errorCode(e), messageOf(e, message));
    // Store and driver errors can quote message data: never let it steer the terminal.
    else err.write(`surety: ${escapeControlChars(message, { keepNewlines: true })}\n`);
    return code;
  }
}

/** The `--json` error line: `{"error":{"code":"SURETY_…","message":"…"}}`, as the HTTP API's errors. */
function writeJsonError(err: Pick<NodeJS.WritableStream, 'write'>, code: string, message: string): void {
  err.write(`${jsonLine({ error: { code, message } })}\n`);
}

function errorCode(e: unknown): string {
  if (e instanceof ConfigError || e instanceof UsageError) return 'SURETY_INVALID_OPTION';
  return e instanceof SuretyError ? e.code : 'SURETY_INTERNAL_ERROR';
}

/** The message without the code in front (the code has its own field). */
function messageOf(e: unknown, message: string): string {
  return e instanceof SuretyError && message.startsWith(`${e.code}: `) ? message.slice(e.code.length + 2) : message;
}

function commanderMessage(
  e: CommanderError,
  printed: readonly string[],
  commands: readonly { name(): string; commands: readonly { name(): string }[] }[],
  argv: readonly string[],
): string {
  const text = (printed.at(-1) ?? e.message).replace(/^error: /, '');
  if (e.code !== 'commander.unknownCommand') return text;
  const name = /unknown command '([^']*)'/.exec(text)?.[1] ?? '';
  const group = commands.find((c) => c.name() === argv[0]);
  const allowed = (group && group.name() !== name ? group.commands : commands).map((c) => c.name());
  return `unknown command "${name}" (allowed: ${allowed.join(', ')})`;
}
