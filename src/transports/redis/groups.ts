import type { RedisClient } from './driver.js';

/**
 * Whether `err` is Redis' error reply `code` (`NOGROUP`, `BUSYGROUP`...): the first word of an error
 * reply is its code, part of the protocol, unlike the text after it.
 */
export function isReplyError(err: unknown, code: string): boolean {
  const e = err as { name?: unknown; message?: unknown } | null;
  return e?.name === 'ReplyError' && typeof e.message === 'string' && e.message.split(' ', 1)[0] === code;
}

/**
 * Creates `group` on `stream` (and the stream, MKSTREAM) starting at `start` (`0`: the oldest
 * entry, `$`: the end); a group that exists already is left as it is.
 */
export async function ensureGroup(client: RedisClient, stream: string, group: string, start: '0' | '$'): Promise<void> {
  try {
    await client.call('XGROUP', 'CREATE', stream, group, start, 'MKSTREAM');
  } catch (err) {
    if (!isReplyError(err, 'BUSYGROUP')) throw err;
  }
}
