import type { AmqpConnection } from './driver.js';

/** What a queue was declared with, as far as RabbitMQ's equivalence check reveals it. */
export interface LearntQueueSettings {
  readonly durable: boolean | null;
  /** The arguments RabbitMQ checks for equivalence (`x-queue-type`, `x-delivery-limit`, ...), or null. */
  readonly arguments: Readonly<Record<string, unknown>> | null;
}

const PRECONDITION_FAILED = 406;
const MAX_ROUNDS = 24;
const INEQUIVALENT = /inequivalent arg '([^']+)' for queue .* in vhost .*: received .* but current is (.+?)"?$/s;

/**
 * Learns an existing queue's durability and arguments over AMQP alone (no management API): a
 * non-passive declare with the same settings is a no-op, while a different one fails with
 * PRECONDITION_FAILED naming the first setting that differs and its current value. RabbitMQ checks
 * `durable` first, so the first answer tells durability; each further answer adds one argument,
 * until the declare matches and succeeds, changing nothing. Every attempt uses a throwaway channel,
 * because the failure closes it. Only call this for a queue a passive declare has just found:
 * a declare that succeeds on a missing queue would create it.
 */
export async function learnQueueSettings(connection: AmqpConnection, queue: string): Promise<LearntQueueSettings> {
  let durable = true;
  let autoDelete = false;
  let durableKnown = false;
  const args: Record<string, unknown> = {};
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const channel = await connection.createChannel();
    channel.on('error', () => {}); // the refusal is the answer
    try {
      await channel.assertQueue(queue, { durable, autoDelete, arguments: args });
      await channel.close().catch(() => {});
      return { durable, arguments: args };
    } catch (err) {
      const found = inequivalentSetting(err);
      if (!found) return { durable: durableKnown ? durable : null, arguments: null };
      if (found.key === 'durable') {
        durable = found.value === true;
        durableKnown = true;
      } else if (found.key === 'auto_delete') autoDelete = found.value === true;
      else if (found.value === undefined) delete args[found.key];
      else args[found.key] = found.value;
      // Before any refusal about `durable`, the broker has accepted our `durable: true`.
      if (found.key !== 'durable') durableKnown = true;
    }
  }
  return { durable: durableKnown ? durable : null, arguments: null };
}

/**
 * The setting a PRECONDITION_FAILED refusal of a declare names and the queue's current value of it
 * (undefined for `none`); undefined for any other error, or when the value cannot be read.
 */
export function inequivalentSetting(err: unknown): { key: string; value: unknown } | undefined {
  if ((err as { code?: unknown } | null)?.code !== PRECONDITION_FAILED) return undefined;
  const m = INEQUIVALENT.exec(err instanceof Error ? err.message : String(err));
  if (!m) return undefined;
  const key = m[1]!;
  const current = m[2]!.trim();
  if (current === 'none') return { key, value: undefined };
  const typed = /^the value '(.*)' of type '([a-z]+)'$/s.exec(current);
  if (typed) {
    const [, text, type] = typed as unknown as [string, string, string];
    if (type === 'longstr' || type === 'shortstr') return { key, value: text };
    if (type === 'bool') return { key, value: text === 'true' };
    if (/^(byte|short|signedint|long|unsignedbyte|unsignedshort|unsignedint|float|double)$/.test(type)) {
      const n = Number(text);
      return Number.isFinite(n) ? { key, value: n } : undefined;
    }
    return undefined; // tables, arrays: cannot be echoed back faithfully
  }
  const plain = /^'(true|false)'$/.exec(current);
  return plain ? { key, value: plain[1] === 'true' } : undefined;
}
