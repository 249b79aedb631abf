import type { WireMessage } from '../../core/wire.js';
import type { RedisArg } from './driver.js';

/** Field names of an entry: short, since every entry repeats them. */
export const FIELDS = { id: 'id', headers: 'h', body: 'b' } as const;

/** Header a poison entry carries to say why it could not be read (the dead letter shows it). */
export const POISON_HEADER = 'surety-redis-poison';

/** The XADD field-value pairs of a wire message; the body goes as raw bytes. */
export function toStreamFields(message: WireMessage): RedisArg[] {
  return [FIELDS.id, message.id, FIELDS.headers, JSON.stringify(message.headers), FIELDS.body, message.body];
}

/**
 * The wire message of an entry. An entry that is not one of ours (fields missing, headers not a
 * JSON object of strings) is still delivered, never dropped: its id falls back to
 * `<stream>/<entry id>`, so the consumer's decoding fails and records it as a dead letter with the
 * reason in POISON_HEADER and the raw fields as text headers.
 */
export function fromStreamEntry(stream: string, entryId: string, fields: readonly Buffer[]): WireMessage {
  const byName = new Map<string, Buffer>();
  for (let i = 0; i + 1 < fields.length; i += 2) byName.set(fields[i]!.toString('utf8'), fields[i + 1]!);
  const id = byName.get(FIELDS.id)?.toString('utf8');
  const body = byName.get(FIELDS.body);
  const rawHeaders = byName.get(FIELDS.headers);
  const headers = rawHeaders === undefined ? undefined : parseHeaders(rawHeaders.toString('utf8'));
  const problem =
    id === undefined || id === ''
      ? `field "${FIELDS.id}" is missing`
      : body === undefined
        ? `field "${FIELDS.body}" is missing`
        : headers === undefined
          ? `field "${FIELDS.headers}" is missing or not a JSON object of strings`
          : undefined;
  if (problem === undefined) return { id: id!, headers: headers!, body: body! };
  const raw: Record<string, string> = {};
  for (const [name, value] of byName) if (name !== FIELDS.body) raw[`surety-redis-field-${name}`] = value.toString();
  return {
    id: id || `${stream}/${entryId}`,
    headers: { ...headers, ...raw, [POISON_HEADER]: `entry ${entryId} of ${stream}: ${problem}` },
    body: body ?? Buffer.alloc(0),
  };
}

function parseHeaders(text: string): Record<string, string> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const entries = Object.entries(parsed);
  if (!entries.every(([, v]) => typeof v === 'string')) return undefined;
  return Object.fromEntries(entries) as Record<string, string>;
}
