import type { Logger } from '../../src/core/logger.js';

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly msg: string;
  readonly obj: Record<string, unknown>;
  /** Date.now() when it was logged. */
  readonly at: number;
}

/** A logger that keeps every line, for tests that assert what was logged and when. */
export function recordingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (obj: object, msg?: string): void =>
      void lines.push({ level, msg: msg ?? '', obj: obj as Record<string, unknown>, at: Date.now() });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}
