import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, expect } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import type { Store } from '../../src/ports/store.js';
import { Outbox } from '../../src/producer/outbox.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { wire } from '../support/consumer-env.js';
import { testEnv } from '../support/env.js';

export type CliStore = Store;

export interface CliFixture {
  readonly store: CliStore;
  /** The flags that point the CLI at this store. */
  readonly dbArgs: readonly string[];
  /** The same, as a config file's database entry. */
  readonly database: { readonly url: string; readonly schema?: string };
  /** Lets a child process open this store (test/support/store-from-env.ts). */
  readonly childEnv: Readonly<Record<string, string>>;
  teardown(): Promise<void>;
}

/** The databases CLI tests run against: SQLite and PostgreSQL. */
export const cliFixtures: Record<'sqlite' | 'postgres', () => Promise<CliFixture>> = {
  async sqlite() {
    const f = await makeSqliteFixture('cli');
    const url = `sqlite:${f.path}`;
    return {
      store: f.store as unknown as CliStore,
      dbArgs: ['--database', url],
      database: { url },
      childEnv: f.childEnv,
      teardown: f.teardown,
    };
  },
  async postgres() {
    const f = await makePostgresFixture('cli');
    return {
      store: f.store as unknown as CliStore,
      dbArgs: ['--database', testEnv.postgresUrl, '--schema', f.schema],
      database: { url: testEnv.postgresUrl, schema: f.schema },
      childEnv: f.childEnv,
      teardown: f.teardown,
    };
  },
};

export interface TwoDatabases {
  /** SQLite, in its own file. */
  readonly orders: CliFixture;
  /** PostgreSQL, in its own schema. */
  readonly billing: CliFixture;
  /** A folder for config files and logs, removed at teardown. */
  readonly dir: string;
  /** The config section naming both: `databases: { orders, billing }`. */
  readonly databasesYaml: string;
  /** A config file holding `databasesYaml` followed by `rest`. */
  config(rest?: string): string;
  teardown(): Promise<void>;
}

/** Two isolated databases of different kinds, as one service's config names them. */
export async function twoDatabases(): Promise<TwoDatabases> {
  const orders = await cliFixtures.sqlite();
  const billing = await cliFixtures.postgres().catch(async (err: unknown) => {
    await orders.teardown();
    throw err;
  });
  const dir = mkdtempSync(join(tmpdir(), 'surety-two-'));
  const entry = (d: CliFixture['database']) =>
    `{ url: ${JSON.stringify(d.url)}${d.schema ? `, schema: ${d.schema}` : ''} }`;
  const databasesYaml = `databases:\n  orders: ${entry(orders.database)}\n  billing: ${entry(billing.database)}\n`;
  let n = 0;
  return {
    orders,
    billing,
    dir,
    databasesYaml,
    config(rest = '') {
      const path = join(dir, `surety-${++n}.yaml`);
      writeFileSync(path, databasesYaml + rest);
      return path;
    },
    async teardown() {
      await Promise.allSettled([orders.teardown(), billing.teardown()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

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

/**
 * `run(...args)`: `surety <command> <args>` against the database `dbArgs()` names (read at each run,
 * so it may name a fixture made in `beforeEach`); `json(...args)` adds `--json`, expects exit 0 and
 * parses the output.
 * @example
 * const { run: dlq, json } = cliRunner(() => f.dbArgs, 'dlq');
 */
export function cliRunner(dbArgs: () => readonly string[], ...command: string[]) {
  const run = (...args: string[]) => runCli([...command, ...args, ...dbArgs()]);
  const json = async (...args: string[]) => {
    const res = await run(...args, '--json');
    expect(res.code, res.err).toBe(0);
    return JSON.parse(res.out);
  };
  return { run, json };
}

/** Reports a relay `relay-a` that last claimed at `lastClaimedAt`, as the doctor reads it. */
export function heartbeat(store: CliStore, lastClaimedAt: number): Promise<void> {
  return store.heartbeats.recordHeartbeat({
    relayId: 'relay-a',
    host: 'app-1',
    pid: 4242,
    startedAt: lastClaimedAt - 60_000,
    lastClaimedAt,
    lastSeenAt: lastClaimedAt,
  });
}

/**
 * A folder for this test file's config files, removed after its tests; `file(name, text)` writes
 * one and returns its path.
 */
export function configFolder(prefix: string): { readonly dir: string; file(name: string, text: string): string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    file(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
  };
}

/** The message of the ConfigError `loadConfig(options)` fails with; fails the test if it loads. */
export async function configProblem(options: Parameters<typeof loadConfig>[0]): Promise<string> {
  const err = await loadConfig(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).message;
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
  const claimed = await store.outbox.claim({
    owner: 'seed',
    limit: 10,
    now: Date.now(),
    leaseMs: 60_000,
    ordered: false,
  });
  await store.outbox.markSent(
    claimed.map((r) => r.seq),
    Date.now(),
  );
  const pendingA = await add('order.created', 'order-1');
  const pendingB = await add('order.created', 'order-2');

  const fail = (group: string, type: string, key: string, error: string, dead = false) =>
    addDeadLetter(store, { group, type, key, error, dead, now });
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

/** Records one delivery failure as a dead letter (pending retry in a minute, or dead); returns its id. `messageId`: a message of an outbox. */
export async function addDeadLetter(
  store: CliStore,
  d: { group: string; type: string; key: string; error: string; dead?: boolean; now?: number; messageId?: string },
): Promise<number> {
  const now = d.now ?? Date.now();
  const m = wire({ type: d.type, key: d.key, payload: { key: d.key } });
  const recorded = await store.transaction((tx) =>
    store.deadLetters.recordDeliveryFailure(
      tx,
      {
        messageId: d.messageId ?? m.id,
        group: d.group,
        topic: d.type,
        type: d.type,
        key: d.key,
        version: 1,
        headers: m.headers,
        body: m.body.toString('utf8'),
        bodyEncoding: 'utf8',
        error: d.error,
        poison: false,
        now,
      },
      () => (d.dead ? { status: 'dead', nextRetryAt: null } : { status: 'pending', nextRetryAt: now + 60_000 }),
    ),
  );
  return recorded.id;
}

/** Everything a CLI action could change, to prove a refused command changed nothing. */
export async function snapshot(store: CliStore): Promise<string> {
  const [outbox, dlq, audit, jobs] = await Promise.all([
    store.admin.listOutbox({}, { limit: 500 }),
    store.admin.listDeadLetters({}, { limit: 500 }),
    store.admin.listAudit({}, { limit: 500 }),
    store.admin.listJobs({ limit: 500 }),
  ]);
  return JSON.stringify({ outbox, dlq, audit, jobs });
}
