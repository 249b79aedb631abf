/** Where a command writes, and what it knows of its terminal; tests pass their own. */
export interface CliIo {
  readonly out: Pick<NodeJS.WritableStream, 'write'>;
  readonly err: Pick<NodeJS.WritableStream, 'write'>;
  /** Progress bars only on an interactive terminal. */
  readonly isTTY: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * JSON.stringify escapes C0 controls but leaves DEL, C1 controls (a terminal reads U+009B as CSI),
 * line separators and bidirectional overrides raw. In its output they can only be inside strings,
 * where a \u escape means the same character.
 */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Prints a value as one JSON line (scripts read `--json` output line by line); no control
 * character reaches a terminal the output is shown on.
 */
export function writeJson(io: CliIo, value: unknown): void {
  io.out.write(`${jsonLine(value)}\n`);
}

/** `value` as JSON on one line, with no character a terminal would act on (see writeJson). */
export function jsonLine(value: unknown): string {
  const json = `${JSON.stringify(value)}`; // undefined prints as before
  return json.replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
