import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed JSON body (undefined when it is not JSON). */
  readonly body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface CallOptions {
  readonly token?: string;
  /** A JSON value, or a raw string sent as is. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** A tiny client for the admin API; keeps every response text so tests can look for leaked secrets. */
export class ApiClient {
  /** Every response: the request line, the body text and the headers. */
  readonly seen: { request: string; text: string; headers: string }[] = [];

  constructor(readonly baseUrl: string) {}

  async call(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      if (typeof options.body !== 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
        headers['content-type'] = 'application/json';
      }
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    this.seen.push({ request: `${method} ${path}`, text, headers: JSON.stringify([...res.headers]) });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }
}

/** A random API token. */
export const newToken = (label: string) => `${label}-${randomBytes(18).toString('base64url')}`;

/** A pino logger at debug level whose lines are kept in memory. */
export function capturingLogger(): { logger: ReturnType<typeof pino>; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}
