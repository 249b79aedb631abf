import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../core/clock.js';
import type { AdminStore, Overview } from '../../ports/admin-store.js';

/**
 * Gauges read from the store's overview at scrape time (one query set per scrape), and a request
 * counter. Metrics a relay sharing the registry already has are left to it.
 */
export function registerAdminMetrics(
  registry: Registry,
  store: Pick<AdminStore, 'overview'>,
  clock: Clock,
): Counter<'method' | 'route' | 'status'> {
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
  let snapshot: Promise<Overview> | undefined;
  const read = () =>
    (snapshot ??= store.overview(clock.now()).finally(() => setTimeout(() => (snapshot = undefined), 1_000).unref()));

  const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, o: Overview) => void) => {
    if (existing(name)) return;
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        fill(this, await read());
      },
    });
  };
  gauge('surety_dead_letters', 'Dead-letter rows by status', ['status'], (g, o) => {
    for (const [status, n] of Object.entries(o.deadLetters)) g.set({ status }, n);
  });
  gauge('surety_dead_letters_expired_leases', 'Replaying dead letters whose replayer died', [], (g, o) =>
    g.set(o.expiredLeases),
  );
  gauge('surety_inbox_rows', 'Inbox rows (messages remembered for deduplication)', [], (g, o) => g.set(o.inboxSize));
  gauge('surety_outbox_rows', 'Outbox rows by status', ['status'], (g, o) => {
    g.set({ status: 'pending' }, o.outbox.pending);
    g.set({ status: 'sent' }, o.outbox.sent);
    g.set({ status: 'dead' }, o.outbox.dead);
  });
  gauge('surety_outbox_oldest_pending_age_seconds', 'Age of the oldest pending outbox row (0 when none)', [], (g, o) =>
    g.set(o.outbox.oldestPendingAt === null ? 0 : Math.max(0, (clock.now() - o.outbox.oldestPendingAt) / 1000)),
  );
  gauge('surety_relays', 'Relays with a heartbeat row', [], (g, o) => g.set(o.relays.length));

  return (
    existing('surety_admin_requests_total') ??
    new Counter({
      name: 'surety_admin_requests_total',
      help: 'Admin API requests by method, route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    })
  );
}
