import { describeError } from '../../core/errors.js';
import type { KafkaAdmin, KafkaProducer } from './driver.js';
import type { ResolvedKafkaOptions } from './options.js';
import { declareTopics } from './topology.js';

/**
 * What the transport knows about reaching the cluster. The client reconnects by itself on the next
 * request; this tracks whether the last request got through, so that relays pause while Kafka is
 * away instead of failing rows, and probes with a metadata request until it is back. The topology
 * is declared on the first successful probe.
 */
export class ConnectionState {
  private ready = false;
  private closed = false;
  private waiters: (() => void)[] = [];
  private probing: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private declared: Promise<void> | undefined;

  constructor(
    private readonly producer: KafkaProducer,
    private readonly admin: KafkaAdmin,
    private readonly options: ResolvedKafkaOptions,
  ) {
    producer.on('client:broker:disconnect', this.lost);
    producer.on('client:broker:failed', this.lost);
  }

  start(): void {
    void this.probe();
  }

  isReady(): boolean {
    return this.ready && !this.closed;
  }

  /** Resolves once the topology exists (the first successful probe declares it). */
  topologyReady(): Promise<void> {
    this.declared ??= declareTopics(this.admin, this.options.topology).catch((err: unknown) => {
      this.declared = undefined;
      throw err;
    });
    return this.declared;
  }

  /** A produce went through or failed: a failure for want of a connection makes the transport not ready. */
  observe(ok: boolean, code?: string): void {
    if (ok) this.markReady();
    else if (code === 'SURETY_CONNECTION_LOST' || code === 'SURETY_PUBLISH_TIMEOUT') this.lost();
  }

  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.closed) return false;
    if (this.ready) return true;
    void this.probe();
    let timer: NodeJS.Timeout | undefined;
    const ok = await Promise.race([
      new Promise<boolean>((resolve) => this.waiters.push(() => resolve(true))),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return ok && !this.closed;
  }

  close(): void {
    this.closed = true;
    this.ready = false;
    clearTimeout(this.retryTimer);
    this.producer.removeListener('client:broker:disconnect', this.lost);
    this.producer.removeListener('client:broker:failed', this.lost);
    this.release();
  }

  private readonly lost = (): void => {
    if (this.closed) return;
    this.ready = false;
    this.scheduleProbe(250);
  };

  private scheduleProbe(delayMs: number): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.probe();
    }, delayMs);
    this.retryTimer.unref();
  }

  private probe(): Promise<void> {
    this.probing ??= (async () => {
      try {
        await this.producer.metadata({ topics: [] });
        await this.topologyReady();
        this.markReady();
      } catch (err) {
        this.options.logger.debug({ error: describeError(err) }, 'Kafka not reachable yet');
        this.ready = false;
        this.scheduleProbe(1_000);
      } finally {
        this.probing = undefined;
      }
    })();
    return this.probing;
  }

  private markReady(): void {
    if (this.closed) return;
    this.ready = true;
    this.release();
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
