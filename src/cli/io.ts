/** Where a command writes, and what it knows of its terminal; tests pass their own. */
export interface CliIo {
  readonly out: Pick<NodeJS.WritableStream, 'write'>;
  readonly err: Pick<NodeJS.WritableStream, 'write'>;
  /** Progress bars only on an interactive terminal. */
  readonly isTTY: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Prints a value as one JSON line (scripts read `--json` output line by line). */
export function writeJson(io: CliIo, value: unknown): void {
  io.out.write(`${JSON.stringify(value)}\n`);
}
