import type { MiddlewareHandler } from 'hono';
import { AdminError, InvalidInputError } from '../admin-errors.js';
import { editBodySchema } from '../admin-schemas.js';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

const EDIT_ROUTE = /^\/api\/dead-letters\/[^/]+\/edit$/;

/**
 * The edit route's body limit, from the edit schema's own: its longest body with every character
 * JSON-escaped at worst (`\u0000`, 6 bytes), plus room for the reason and the rest of the object.
 */
export const EDIT_REQUEST_MAX_BYTES = editBodySchema.maxLength! * 6 + 65_536;

/** The body limit of a route: `maxBytes`, but at least what the edit route's schema allows on that route. */
export function bodyLimit(maxBytes: number): (path: string) => number {
  return (path) => (EDIT_ROUTE.test(path) ? Math.max(maxBytes, EDIT_REQUEST_MAX_BYTES) : maxBytes);
}

/**
 * Reads a request body once, before validation: refuses one over the route's limit (413), one that
 * is not JSON (415) or not valid JSON (400). An empty body becomes `{}`, so routes whose fields are
 * all optional accept a bare POST, and routes with required fields name the missing ones.
 */
export function bodyGuard(limitOf: (path: string) => number): MiddlewareHandler {
  return async (c, next) => {
    const raw = c.req.raw;
    if (!WITH_BODY.has(raw.method)) return next();
    const maxBytes = limitOf(c.req.path);
    const declared = Number(raw.headers.get('content-length') ?? '0');
    if (declared > maxBytes) throw tooLarge(maxBytes);
    const bytes = raw.body ? await readLimited(raw.body, maxBytes) : new Uint8Array(0);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new InvalidInputError([{ path: 'body', message: 'is not valid UTF-8' }]);
    }
    let json = '{}';
    if (text.trim() !== '') {
      if (!JSON_TYPE.test(raw.headers.get('content-type') ?? '')) {
        throw new AdminError('SURETY_UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON (Content-Type: application/json)');
      }
      try {
        JSON.parse(text);
      } catch {
        throw new InvalidInputError([{ path: 'body', message: 'is not valid JSON' }]);
      }
      json = text;
    }
    const headers = new Headers(raw.headers);
    headers.set('content-type', 'application/json');
    headers.delete('content-length');
    c.req.raw = new Request(raw.url, { method: raw.method, headers, body: json, signal: raw.signal });
    return next();
  };
}

function tooLarge(maxBytes: number): AdminError {
  return new AdminError('SURETY_PAYLOAD_TOO_LARGE', `the body is larger than ${maxBytes} bytes`);
}

async function readLimited(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
