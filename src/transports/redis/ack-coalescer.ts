import { describeError, SuretyError } from '../../core/errors.js';
import type { RedisConnection } from './connection.js';

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Gathers the acks of one turn of the event loop into one `XACK stream group id...` per stream,
 * all in one pipeline. Each ack resolves once Redis answered; a lost connection rejects it, and the
 * entry stays pending, to be claimed and delivered again (the consumer's inbox drops the repeat).
 */
export class AckCoalescer {
  private batch = new Map<string, { stream: string; group: string; ids: string[]; waiters: Waiter[] }>();
  private scheduled: NodeJS.Immediate | undefined;

  constructor(private readonly connection: RedisConnection) {}

  ack(stream: string, group: string, id: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const key = `${stream}\0${group}`;
      const entry = this.batch.get(key) ?? { stream, group, ids: [], waiters: [] };
      entry.ids.push(id);
      entry.waiters.push({ resolve, reject });
      this.batch.set(key, entry);
      this.scheduled ??= setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = undefined;
    const batch = [...this.batch.values()];
    this.batch = new Map();
    const pipeline = this.connection.client.pipeline();
    for (const { stream, group, ids } of batch) pipeline.call('XACK', stream, group, ...ids);
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await pipeline.exec();
    } catch (err) {
      replies = batch.map(() => [err as Error, null]);
    }
    batch.forEach(({ stream, waiters }, i) => {
      const err = replies?.[i]?.[0];
      for (const w of waiters) {
        if (!err) w.resolve();
        else
          w.reject(
            new SuretyError('SURETY_CONNECTION_LOST', `XACK on ${stream} failed: ${describeError(err)}`, {
              cause: err,
            }),
          );
      }
    });
  }
}
