import { Counter, Histogram, type Registry } from 'prom-client';
import type { Outcome } from './work-item.js';

/** What became of one broker delivery. */
export type DeliveryOutcome = 'handled' | 'duplicate' | 'failed' | 'dead';
/** What became of one replayed dead letter. */
export type ReplayOutcome = 'resolved' | 'rescheduled' | 'dead';

/**
 * Prometheus metrics of a consumer and its replay job, labelled with the consumer group. Consumers
 * sharing a registry share the metrics (one series per group).
 */
export class ConsumerMetrics {
  readonly deliveries: Counter<'group' | 'outcome'>;
  readonly batchDuration: Histogram<'group'>;
  readonly replays: Counter<'group' | 'outcome'>;

  constructor(
    readonly registry: Registry,
    private readonly group: string,
  ) {
    const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
    this.deliveries =
      existing('surety_consumer_deliveries_total') ??
      new Counter({
        name: 'surety_consumer_deliveries_total',
        help: 'Broker deliveries by outcome (handled, duplicate, failed: retried later, dead: an operator must act)',
        labelNames: ['group', 'outcome'],
        registers: [registry],
      });
    this.batchDuration =
      existing('surety_consumer_batch_duration_seconds') ??
      new Histogram({
        name: 'surety_consumer_batch_duration_seconds',
        help: "Time to handle one batch in the consumer's database transaction",
        labelNames: ['group'],
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
        registers: [registry],
      });
    this.replays =
      existing('surety_replay_total') ??
      new Counter({
        name: 'surety_replay_total',
        help: 'Dead letters replayed by outcome (resolved, rescheduled, dead)',
        labelNames: ['group', 'outcome'],
        registers: [registry],
      });
  }

  delivered(outcome: Outcome): void {
    this.deliveries.inc({ group: this.group, outcome: deliveryOutcome(outcome) });
  }

  replayed(outcome: ReplayOutcome, n = 1): void {
    if (n > 0) this.replays.inc({ group: this.group, outcome }, n);
  }

  /** Starts timing a batch; call the result when it is done. */
  batch(): () => void {
    return this.batchDuration.startTimer({ group: this.group });
  }
}

function deliveryOutcome(outcome: Outcome): DeliveryOutcome {
  if (outcome.kind === 'recorded') return outcome.failure.status === 'dead' ? 'dead' : 'failed';
  return outcome.kind;
}
