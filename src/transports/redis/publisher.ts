import { describeError, PublishError } from '../../core/errors.js';
import type { OutgoingMessage } from '../../ports/transport.js';
import type { RedisConnection } from './connection.js';
import type { RedisArg } from './driver.js';
import type { ResolvedRedisOptions } from './options.js';
import { toStreamFields } from './wire-mapping.js';

/** Most XADDs sent in one pipeline. */
const MAX_BATCH = 1_000;

interface PendingPublish {
  readonly out: OutgoingMessage;
  readonly resolve: () => void;
  readonly reject: (err: PublishError) => void;
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

/**
 * Publishes with XADD, batched: publishes issued in the same turn of the event loop go in one
 * pipeline (one round trip), followed by one WAIT when replicas must acknowledge. A publish
 * resolves on the entry id Redis replied with for it, and only then; a lost connection, an error
 * reply or the deadline rejects it. A publish that rejects may still have been written (its reply
 * was lost): the relay publishes it again and the consumers' inbox drops the duplicate.
 */
export class StreamPublisher {
  private queue: PendingPublish[] = [];
  private flushing: NodeJS.Immediate | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: ResolvedRedisOptions,
  ) {}

  publish(out: OutgoingMessage): Promise<void> {
    if (this.closed)
      return Promise.reject(new PublishError('SURETY_TRANSPORT_CLOSED', 'the Redis transport is closed'));
    if (!this.connection.isReady()) {
      const lost = this.connection.notConnected(`publish to ${out.topic}`, this.options.url);
      return Promise.reject(new PublishError('SURETY_CONNECTION_LOST', lost.message));
    }
    return new Promise<void>((resolve, reject) => {
      const pending: PendingPublish = { out, resolve, reject, timer: undefined, done: false };
      pending.timer = setTimeout(() => {
        const ms = this.options.publishTimeoutMs;
        this.fail(pending, new PublishError('SURETY_PUBLISH_TIMEOUT', `Redis did not answer the XADD within ${ms} ms`));
      }, this.options.publishTimeoutMs);
      this.queue.push(pending);
      this.flushing ??= setImmediate(() => this.flush());
    });
  }

  /** Sends what was queued, waits for every reply (up to `closeTimeoutMs`), then refuses the rest. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.flushing) clearImmediate(this.flushing);
    this.flush();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.closeTimeoutMs)));
    await Promise.race([Promise.allSettled([...this.inFlight]), deadline]);
    clearTimeout(timer);
  }

  /** Rejects every publish still unanswered (the connection is going away). */
  abandon(): void {
    for (const pending of this.queue) this.fail(pending, closedError());
    this.queue = [];
  }

  private flush(): void {
    this.flushing = undefined;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH).filter((p) => !p.done);
      if (batch.length === 0) continue;
      const sent = this.send(batch).finally(() => this.inFlight.delete(sent));
      this.inFlight.add(sent);
    }
  }

  private async send(batch: PendingPublish[]): Promise<void> {
    const pipeline = this.connection.client.pipeline();
    for (const { out } of batch) {
      pipeline.callBuffer(
        'XADD',
        this.options.streamForTopic(out.topic),
        ...this.trimArgs(),
        '*',
        ...toStreamFields(out.message),
      );
    }
    const replicas = this.options.waitReplicas;
    if (replicas) pipeline.call('WAIT', replicas.count, replicas.timeoutMs);
    let replies: [Error | null, unknown][];
    try {
      replies = (await pipeline.exec()) ?? [];
    } catch (err) {
      for (const pending of batch) this.fail(pending, translate(err));
      return;
    }
    const acknowledged = replicas ? replies[batch.length] : undefined;
    batch.forEach((pending, i) => {
      const [err] = replies[i] ?? [new Error('no reply')];
      if (err) return this.fail(pending, translate(err));
      if (replicas) {
        const [waitErr, count] = acknowledged ?? [new Error('no reply to WAIT')];
        if (waitErr) return this.fail(pending, translate(waitErr));
        if (Number(count) < replicas.count) {
          return this.fail(
            pending,
            new PublishError(
              'SURETY_PUBLISH_NACKED',
              `only ${Number(count)} of ${replicas.count} replicas acknowledged the XADD within ${replicas.timeoutMs} ms (waitReplicas)`,
            ),
          );
        }
      }
      this.succeed(pending);
    });
  }

  private trimArgs(): RedisArg[] {
    const trim = this.options.trim;
    if (!trim) return [];
    // `~`: Redis trims whole macro nodes, far cheaper than an exact bound.
    return trim[0] === 'MAXLEN' ? ['MAXLEN', '~', trim[1]] : ['MINID', '~', `${Date.now() - trim[1]}-0`];
  }

  private succeed(pending: PendingPublish): void {
    if (pending.done) return;
    pending.done = true;
    clearTimeout(pending.timer);
    pending.resolve();
  }

  private fail(pending: PendingPublish, err: PublishError): void {
    if (pending.done) return;
    pending.done = true;
    clearTimeout(pending.timer);
    pending.reject(err);
  }
}

function closedError(): PublishError {
  return new PublishError('SURETY_TRANSPORT_CLOSED', 'the Redis transport closed before the publish was answered');
}

/**
 * An error reply (WRONGTYPE, OOM, NOPERM...) refuses this publish; anything else (the connection
 * closed, the command never written) says nothing about the message.
 */
function translate(err: unknown): PublishError {
  if ((err as { name?: unknown } | null)?.name === 'ReplyError') {
    return new PublishError('SURETY_PUBLISH_REFUSED', `Redis refused the XADD: ${describeError(err)}`, { cause: err });
  }
  return new PublishError('SURETY_CONNECTION_LOST', `the XADD got no reply: ${describeError(err)}`, { cause: err });
}
