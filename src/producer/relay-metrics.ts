import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { OutboxRelayStore } from '../ports/outbox-store.js';
import type { Clock } from '../core/clock.js';

/** Prometheus metrics of one relay. Row gauges are read from the store at scrape time. */
export class RelayMetrics {
  readonly publishDuration: Histogram<'outcome'>;
  readonly attempts: Counter<'outcome'>;
  readonly dead: Counter;

  constructor(
    readonly registry: Registry,
    store: OutboxRelayStore,
    clock: Clock,
  ) {
    const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
    this.publishDuration =
      existing('surety_relay_publish_duration_seconds') ??
      new Histogram({
        name: 'surety_relay_publish_duration_seconds',
        help: 'Time from publish to the broker confirm (or failure) of one outbox row',
        labelNames: ['outcome'],
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
        registers: [registry],
      });
    this.attempts =
      existing('surety_relay_publish_attempts_total') ??
      new Counter({
        name: 'surety_relay_publish_attempts_total',
        help: 'Publish attempts of outbox rows by outcome (confirmed, nacked, unroutable, refused, timeout, connection_lost, error)',
        labelNames: ['outcome'],
        registers: [registry],
      });
    this.dead =
      existing('surety_relay_dead_total') ??
      new Counter({ name: 'surety_relay_dead_total', help: 'Outbox rows that went dead', registers: [registry] });
    if (!existing('surety_outbox_rows')) {
      let snapshot: Promise<Awaited<ReturnType<OutboxRelayStore['stats']>>> | undefined;
      // One stats query per scrape serves both gauges.
      const read = () =>
        (snapshot ??= store.stats().finally(() => setTimeout(() => (snapshot = undefined), 100).unref()));
      new Gauge({
        name: 'surety_outbox_rows',
        help: 'Outbox rows by status',
        labelNames: ['status'],
        registers: [registry],
        async collect() {
          const s = await read();
          this.set({ status: 'pending' }, s.pending);
          this.set({ status: 'sent' }, s.sent);
          this.set({ status: 'dead' }, s.dead);
        },
      });
      new Gauge({
        name: 'surety_outbox_oldest_pending_age_seconds',
        help: 'Age of the oldest pending outbox row (0 when none)',
        registers: [registry],
        async collect() {
          const s = await read();
          this.set(s.oldestPendingAt === null ? 0 : Math.max(0, (clock.now() - s.oldestPendingAt) / 1000));
        },
      });
    }
  }
}
