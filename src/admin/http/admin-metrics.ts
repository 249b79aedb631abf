import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../core/clock.js';
import type { Overview } from '../../ports/admin-store.js';

/** A store the metrics read, by the name the console shows; `overview` is the store's shared (cached) read. */
export interface MeteredStore {
  readonly name: string;
  overview(): Promise<Overview>;
}

type Snapshot = { store: string; overview: Overview | undefined }[];

/**
 * Gauges read from each store's overview at scrape time (the same shared read the console uses),
 * labelled with the store's name, and a request counter. A store that fails is left out of the
 * gauges and shows as 0 in `surety_admin_store_up`. Metrics a relay sharing the registry already
 * has are left to it.
 */
export function registerAdminMetrics(
  registry: Registry,
  stores: readonly MeteredStore[],
  clock: Clock,
): Counter<'method' | 'route' | 'status'> {
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
  // Every gauge of one scrape reads the same snapshot.
  let snapshot: Promise<Snapshot> | undefined;
  const read = () =>
    (snapshot ??= Promise.all(
      stores.map((s) =>
        s.overview().then(
          (overview) => ({ store: s.name, overview }),
          () => ({ store: s.name, overview: undefined }),
        ),
      ),
    ).finally(() => (snapshot = undefined)));

  const gauge = (
    name: string,
    help: string,
    labelNames: string[],
    fill: (g: Gauge, o: Overview, store: string) => void,
  ) => {
    if (existing(name)) return;
    new Gauge({
      name,
      help,
      labelNames: [...labelNames, 'store'],
      registers: [registry],
      async collect() {
        const all = await read();
        this.reset(); // a store that stopped answering must not keep its last values
        for (const { store, overview } of all) if (overview) fill(this, overview, store);
      },
    });
  };
  gauge('surety_dead_letters', 'Dead-letter rows by status', ['status'], (g, o, store) => {
    for (const [status, n] of Object.entries(o.deadLetters)) g.set({ status, store }, n);
  });
  gauge(
    'surety_dead_letters_expired_leases',
    'Dead letters a replayer left when it died (counted as pending)',
    [],
    (g, o, store) => g.set({ store }, o.expiredLeases),
  );
  gauge('surety_inbox_rows', 'Inbox rows (messages remembered for deduplication)', [], (g, o, store) =>
    g.set({ store }, o.inboxSize),
  );
  gauge('surety_outbox_rows', 'Outbox rows by status', ['status'], (g, o, store) => {
    g.set({ status: 'pending', store }, o.outbox.pending);
    g.set({ status: 'sent', store }, o.outbox.sent);
    g.set({ status: 'dead', store }, o.outbox.dead);
  });
  gauge(
    'surety_outbox_oldest_pending_age_seconds',
    'Age of the oldest pending outbox row (0 when none)',
    [],
    (g, o, store) =>
      g.set(
        { store },
        o.outbox.oldestPendingAt === null ? 0 : Math.max(0, (clock.now() - o.outbox.oldestPendingAt) / 1000),
      ),
  );
  gauge('surety_relays', 'Relays with a heartbeat row', [], (g, o, store) => g.set({ store }, o.relays.length));
  if (!existing('surety_admin_store_up')) {
    new Gauge({
      name: 'surety_admin_store_up',
      help: "1 when the store answered the scrape's overview, 0 when it failed",
      labelNames: ['store'],
      registers: [registry],
      async collect() {
        for (const { store, overview } of await read()) this.set({ store }, overview ? 1 : 0);
      },
    });
  }

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
