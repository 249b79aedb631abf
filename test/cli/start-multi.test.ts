import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/producer/outbox.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';
import { addDeadLetter, twoDatabases, type CliStore, type TwoDatabases } from './cli-harness.js';

const TOKEN = 'start-multi-operator-token';
const auth = { headers: { authorization: `Bearer ${TOKEN}` } };
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

async function addOutbox(store: CliStore, key: string): Promise<string> {
  const outbox = new Outbox({ store });
  return store.transaction(
    async (tx) => (await outbox.add(tx, { type: 'order.created', key, payload: { key } })).messageId,
  );
}

describe('surety start over two databases (orders on SQLite, billing on PostgreSQL)', () => {
  let t: TwoDatabases;
  let child: ChildProcess | undefined;

  beforeEach(async () => {
    t = await twoDatabases();
  });
  afterEach(async () => {
    child?.kill('SIGKILL');
    child = undefined;
    await t.teardown();
  });

  /** Starts `surety start` and resolves with its banner once it has printed `until`. */
  async function start(config: string, until: RegExp) {
    child = spawnTs('cli/fixtures/surety.ts', { SURETY_LOG_LEVEL: 'warn' }, ['start', '--config', config]);
    const end = exited(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor('the start banner', () => until.test(out), 30_000);
    return { end, out: () => out };
  }

  it('relays from each database, replays through the chosen one, and serves both in one console', async () => {
    const fromOrders = await addOutbox(t.orders.store, 'o-1');
    const fromBilling = await addOutbox(t.billing.store, 'o-2');
    // Due now, in billing only: replayed only if the replayer runs on billing's store.
    const dead = await addDeadLetter(t.billing.store, {
      group: 'billing-billing',
      type: 'order.created',
      key: 'o-3',
      error: 'Error: downstream answered 503',
      now: Date.now() - 120_000,
    });
    const config = t.config(`transport: { kind: embedded, path: log.sqlite }
relay: { pollIntervalMs: 50, heartbeatMs: 200ms }
replayer: { enabled: true, module: ${fixture('store-replay-consumer.ts')}, intervalMs: 100, database: billing }
console:
  enabled: true
  port: 0
  tokens: [{ name: ops, role: operator, token: ${TOKEN} }]
`);
    const { end, out } = await start(config, /console at http:\/\/\S+\n/);
    expect(out()).toMatch(/^ {2}relay \S+ on orders -> embedded$/m);
    expect(out()).toMatch(/^ {2}relay \S+ on billing -> embedded$/m);
    expect(out()).toMatch(/^ {2}replayer for group billing-billing \(100\/s\)$/m);
    const url = /console at (http:\/\/\S+)\n/.exec(out())![1]!;

    await waitFor('both relays to send', async () => {
      const [a, b] = [await t.orders.store.outbox.get(fromOrders), await t.billing.store.outbox.get(fromBilling)];
      return a?.status === 'sent' && b?.status === 'sent';
    });
    await waitFor("the replayer to resolve billing's dead letter", async () => {
      return (await t.billing.store.admin.getDeadLetterById(dead))?.status === 'resolved';
    });

    const stores = await fetch(`${url}/api/stores`, auth);
    expect(stores.status).toBe(200);
    expect(await stores.json()).toEqual({
      stores: [
        { name: 'orders', dialect: 'sqlite', default: true },
        { name: 'billing', dialect: 'postgres', default: false },
      ],
    });
    const letters = (await (await fetch(`${url}/api/dead-letters?store=billing`, auth)).json()) as {
      store: string;
      items: { id: number; status: string }[];
    };
    expect(letters).toMatchObject({ store: 'billing', items: [{ id: dead, status: 'resolved' }] });
    expect((await fetch(`${url}/api/dead-letters?store=nope`, auth)).status).toBe(400);

    await waitFor('a claim in both heartbeats', async () => {
      const [a, b] = [await t.orders.store.heartbeats.relays(), await t.billing.store.heartbeats.relays()];
      return a[0]?.lastClaimedAt != null && b[0]?.lastClaimedAt != null;
    });
    const report = (await (await fetch(`${url}/api/doctor`, auth)).json()) as {
      checks: { id: string; store?: string; level: string; message: string }[];
    };
    expect(report.checks.filter((c) => c.id === 'producer.relays').map((c) => [c.store, c.level])).toEqual([
      ['orders', 'ok'],
      ['billing', 'ok'],
    ]);
    expect(report.checks.find((c) => c.id === 'producer.relays')!.message).toMatch(/^orders: /);

    child!.kill('SIGTERM');
    const { code, signal, stderr } = await end;
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null });
    expect(await t.orders.store.heartbeats.relays()).toEqual([]); // each relay removed its heartbeat
    expect(await t.billing.store.heartbeats.relays()).toEqual([]);
    child = undefined;
  });

  it('runs the relay only on the databases relay.databases names', async () => {
    const fromOrders = await addOutbox(t.orders.store, 'o-1');
    const fromBilling = await addOutbox(t.billing.store, 'o-2');
    const config = t.config(`transport: { kind: embedded, path: log.sqlite }
relay: { databases: [billing], pollIntervalMs: 50, heartbeatMs: 200ms }
`);
    const { end, out } = await start(config, /relay \S+ on billing -> embedded\n/);
    expect(out()).not.toContain(' on orders ');
    await waitFor(
      "billing's relay to send",
      async () => (await t.billing.store.outbox.get(fromBilling))?.status === 'sent',
    );
    // No relay ever ran on orders: no heartbeat row, and its message still waits.
    expect(await t.orders.store.heartbeats.relays()).toEqual([]);
    expect((await t.orders.store.outbox.get(fromOrders))?.status).toBe('pending');
    child!.kill('SIGTERM');
    expect((await end).code).toBe(0);
    child = undefined;
  });
});
