import { SuretyError } from '../../core/errors.js';
import type { ConnectionManager } from './connection.js';
import type { AmqpConnection } from './driver.js';

/** What a passive declare tells about a queue: messages ready for delivery, and consumers. */
export interface QueueInspection {
  readonly messageCount: number;
  readonly consumerCount: number;
}

const NOT_FOUND = 404;

/** {@link passiveDeclare} on the transport's current connection. */
export async function inspectQueue(manager: ConnectionManager, name: string): Promise<QueueInspection | undefined> {
  const connection = manager.current;
  if (!connection) throw new SuretyError('SURETY_CONNECTION_LOST', 'not connected to RabbitMQ');
  return passiveDeclare(connection, name);
}

/**
 * Passive declare on a throwaway channel, since a missing queue makes the broker close that channel:
 * the queue's counts, or undefined when it does not exist.
 */
export async function passiveDeclare(connection: AmqpConnection, name: string): Promise<QueueInspection | undefined> {
  const channel = await connection.createChannel();
  channel.on('error', () => {}); // the 404 is the answer, not a failure
  try {
    const { messageCount, consumerCount } = await channel.checkQueue(name);
    return { messageCount, consumerCount };
  } catch (err) {
    if ((err as { code?: unknown }).code === NOT_FOUND) return undefined;
    throw err;
  } finally {
    await Promise.resolve()
      .then(() => channel.close())
      .catch(() => {}); // already closed after a 404
  }
}
