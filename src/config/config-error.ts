import { SuretyError } from '../core/errors.js';

export interface ConfigProblem {
  /** Dotted key path, e.g. `transport.kind`, `console.tokens[0].role`; `(root)` for the whole file. */
  readonly path: string;
  readonly message: string;
  /** The environment variable that set the value, when one did. */
  readonly from?: string;
}

/**
 * A config file or environment variable is invalid. The message names the key path and what is
 * allowed, e.g. `config error at transport.kind: must be one of rabbitmq, embedded, nats, redis, kafka (got "sqs")`.
 */
export class ConfigError extends SuretyError {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[], options?: { cause?: unknown }) {
    super('SURETY_INVALID_OPTION', problems.map(describeProblem).join('\n'), options);
    this.problems = problems;
  }

  /** The first problem's key path. */
  get path(): string {
    return this.problems[0]?.path ?? '(root)';
  }
}

function describeProblem(p: ConfigProblem): string {
  return `config error at ${p.path}${p.from ? ` (from ${p.from})` : ''}: ${p.message}`;
}
