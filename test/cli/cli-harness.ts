import { Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { AdminStore } from '../../src/ports/admin-store.js';
import type { ConsumerStore } from '../../src/ports/consumer-store.js';
import type { OutboxStore } from '../../src/ports/outbox-store.js';
import { Outbox } from '../../src/producer/outbox.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { wire } from '../support/consumer-env.js';
import { testEnv } from '../support/env.js';

export type CliStore = OutboxStore & ConsumerStore & AdminStore;

export interface CliFixture {
  readonly store: CliStore;
  /** The flags that point the CLI at this store. */
  readonly dbArgs: readonly string[];
  teardown(): Promise<void>;
}

/** The databases CLI tests run against: SQLite and PostgreSQL. */
export const cliFixtures: Record<'sqlite' | 'postgres', () => Promise<CliFixture>> = {
  async sqlite() {
    const f = await makeSqliteFixture('cli');
    return { store: f.store as unknown as CliStore, dbArgs: ['--database', `sqlite:${f.path}`], teardown: f.teardown };
  },
  async postgres() {
    const f = await makePostgresFixture('cli');
    return {
      store: f.store as unknown as CliStore,
      dbArgs: ['--database', testEnv.postgresUrl, '--schema', f.schema],
      teardown: f.teardown,
    };
  },
};

function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

/** Runs `surety <args>` in-process with an empty environment (nothing from this machine leaks in). */
export async function runCli(args: readonly string[], env: Record<string, string> = {}) {
  const out = capture();
  const err = capture();
  const code = await main([...args], out.stream, err.stream, { env, isTTY: false });
  return { code, out: out.text(), err: err.text() };
}

export interface Seeded {
  /** Outbox message ids: two pending order.created, one sent invoice.issued. */
  readonly outbox: { pendingA: string; pendingB: string; sent: string };
  /** Dead-letter ids: billing x2 (order.created), billing x1 (invoice.issued, dead), shipping x1. */
  readonly dlq: { billingA: number; billingB: number; billingDead: number; shipping: number };
}

/** A small, known data set: outbox rows in two states and dead letters in two groups. */
export async function seed(store: CliStore, now = Date.now()): Promise<Seeded> {
  const outbox = new Outbox({ store });
  const add = (type: string, key: string) =>
    store.transaction(async (tx) => (await outbox.add(tx, { type, key, payload: { key } })).messageId);
  const sent = await add('invoice.issued', 'inv-1');
  const claimed = await store.claim({ owner: 'seed', limit: 10, now: Date.now(), leaseMs: 60_000, ordered: false });
  await store.markSent(
    claimed.map((r) => r.seq),
    Date.now(),
  );
  const pendingA = await add('order.created', 'order-1');
  const pendingB = await add('order.created', 'order-2');

  const fail = async (group: string, type: string, key: string, error: string, dead = false) => {
    const m = wire({ type, key, payload: { key } });
    const recorded = await store.transaction((tx) =>
      store.recordDeliveryFailure(
        tx,
        {
          messageId: m.id,
          group,
          topic: type,
          type,
          key,
          version: 1,
          headers: m.headers,
          body: m.body.toString('utf8'),
          bodyEncoding: 'utf8',
          error,
          poison: false,
          now,
        },
        () => (dead ? { status: 'dead', nextRetryAt: null } : { status: 'pending', nextRetryAt: now + 60_000 }),
      ),
    );
    return recorded.id;
  };
  return {
    outbox: { pendingA, pendingB, sent },
    dlq: {
      billingA: await fail('billing', 'order.created', 'order-1', 'Error: downstream answered 503'),
      billingB: await fail('billing', 'order.created', 'order-2', 'Error: downstream answered 503'),
      billingDead: await fail('billing', 'invoice.issued', 'inv-1', 'ValidationError: amount missing', true),
      shipping: await fail('shipping', 'order.created', 'order-1', 'Error: no address'),
    },
  };
}

/** Everything a CLI action could change, to prove a refused command changed nothing. */
export async function snapshot(store: CliStore): Promise<string> {
  const [outbox, dlq, audit, jobs] = await Promise.all([
    store.listOutbox({}, { limit: 500 }),
    store.listDeadLetters({}, { limit: 500 }),
    store.listAudit({}, { limit: 500 }),
    store.listJobs({ limit: 500 }),
  ]);
  return JSON.stringify({ outbox, dlq, audit, jobs });
}
