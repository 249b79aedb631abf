import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/producer/outbox.js';
import {
  addDeadLetter,
  cliRunner,
  heartbeat,
  runCli,
  seed,
  snapshot,
  twoDatabases,
  type CliStore,
  type TwoDatabases,
} from './cli-harness.js';

const MIN = 60_000;
const NOPE = 'surety: --store must be one of orders, billing (got "nope")\n';

async function addOutbox(store: CliStore, type: string, key: string, now = Date.now()): Promise<string> {
  const outbox = new Outbox({ store, clock: { now: () => now } });
  return store.transaction(async (tx) => (await outbox.add(tx, { type, key, payload: { key } })).messageId);
}

describe('CLI over two databases (orders on SQLite, billing on PostgreSQL)', () => {
  let t: TwoDatabases;
  const { json } = cliRunner(() => []);

  beforeEach(async () => {
    t = await twoDatabases();
  });
  afterEach(() => t.teardown());

  it('dlq, outbox and audit act on the database --store names; the first is the default', async () => {
    const s = await seed(t.billing.store);
    const order = await addOutbox(t.orders.store, 'order.created', 'order-9');
    const config = t.config();
    const c = ['--config', config];

    expect((await json('dlq', 'list', ...c)).items).toEqual([]); // orders has none
    expect((await runCli(['dlq', 'list', ...c])).out).toBe('no dead letter matches\n');
    const billing = await json('dlq', 'list', '--store', 'billing', ...c);
    expect(billing.items.map((r: { id: number }) => r.id)).toEqual([
      s.dlq.shipping,
      s.dlq.billingDead,
      s.dlq.billingB,
      s.dlq.billingA,
    ]);
    expect((await json('outbox', 'list', ...c)).items.map((r: { messageId: string }) => r.messageId)).toEqual([order]);
    expect((await json('outbox', 'list', '--store', 'orders', ...c)).items).toHaveLength(1);
    expect((await json('outbox', 'list', '--store', 'billing', ...c)).items).toHaveLength(3);

    const replay = await runCli([
      'dlq',
      'replay',
      String(s.dlq.billingDead),
      '--store',
      'billing',
      '--reason',
      'fixed',
      ...c,
    ]);
    expect(replay, replay.err).toMatchObject({
      code: 0,
      out: `dead letter ${s.dlq.billingDead}: due for replay now\n`,
    });
    expect((await t.billing.store.admin.getDeadLetterById(s.dlq.billingDead))!.status).toBe('pending');
    // The audit entry lives in the database acted upon.
    expect((await json('audit', '--store', 'billing', ...c)).items).toEqual([
      expect.objectContaining({ action: 'dlq.replay', target: `dlq:${s.dlq.billingDead}`, reason: 'fixed' }),
    ]);
    expect((await json('audit', ...c)).items).toEqual([]);
  });

  it('outbox show looks in every database and says where it found each part; or that none knows it', async () => {
    // Written by billing's outbox; its consumer in orders failed on it.
    const id = await addOutbox(t.billing.store, 'invoice.issued', 'inv-7');
    const failed = await addDeadLetter(t.orders.store, {
      group: 'shipping',
      type: 'invoice.issued',
      key: 'inv-7',
      error: 'Error: no address',
      messageId: id,
    });
    const c = ['--config', t.config()];
    const res = await runCli(['outbox', 'show', id, ...c]);
    expect(res.code, res.err).toBe(0);
    expect(res.out).toContain(`message ${id}\nlooked in: orders, billing\n\noutbox (in billing):\n`);
    expect(res.out).toMatch(/^status:\s+pending$/m);
    expect(res.out).toMatch(new RegExp(`^DATABASE\\s+ID\\s+GROUP.*\\norders\\s+${failed}\\s+shipping\\s+pending`, 'm'));
    const merged = await json('outbox', 'show', id, ...c);
    expect(merged).toMatchObject({
      messageId: id,
      outbox: { store: 'billing', key: 'inv-7' },
      deadLetters: [{ store: 'orders', id: failed }],
      unavailable: [],
    });

    // --store narrows the search to one database.
    const onlyOrders = await json('outbox', 'show', id, '--store', 'orders', ...c);
    expect(onlyOrders.outbox).toBeNull();
    const unknown = '0194b7a0-0000-7000-8000-00000000beef';
    expect(await runCli(['outbox', 'show', unknown, ...c])).toMatchObject({
      code: 1,
      err: `surety: SURETY_NOT_FOUND: no outbox row, inbox record or dead letter of any of the databases orders, billing knows message ${unknown}\n`,
    });
  });

  it('an unknown --store is bad usage (exit 2) naming the allowed databases, and changes nothing', async () => {
    const s = await seed(t.billing.store);
    await addOutbox(t.orders.store, 'order.created', 'order-9');
    const before = [await snapshot(t.orders.store), await snapshot(t.billing.store)];
    const c = ['--config', t.config(), '--store', 'nope'];
    for (const args of [
      ['dlq', 'list'],
      ['dlq', 'show', String(s.dlq.billingA)],
      ['dlq', 'replay', String(s.dlq.billingDead)],
      ['dlq', 'ignore', '--all-matching', '--group', 'billing', '--reason', 'x'],
      ['outbox', 'list'],
      ['outbox', 'resend', s.outbox.sent],
      ['audit'],
      ['doctor'],
      ['migrate'],
    ]) {
      const res = await runCli([...args, ...c]);
      expect({ args, code: res.code, err: res.err }).toEqual({ args, code: 2, err: NOPE });
    }
    expect([await snapshot(t.orders.store), await snapshot(t.billing.store)]).toEqual(before);
    expect(await runCli(['start', ...c])).toMatchObject({ code: 2, err: "surety: unknown option '--store'\n" });

    // A config with one `database` has one name: default.
    const one = [...t.billing.dbArgs];
    expect(await runCli(['dlq', 'list', ...one, '--store', 'billing'])).toMatchObject({
      code: 2,
      err: 'surety: --store must be one of default (got "billing")\n',
    });
    expect((await json('dlq', 'list', ...one, '--store', 'default')).items).toHaveLength(4);
  });

  it('migrate creates the tables in every database, or in the one --store names', async () => {
    const config = t.config();
    const env = { SURETY_TABLE_PREFIX: 'mig_' };
    const list = (store: string) => runCli(['outbox', 'list', '--config', config, '--store', store, '--json'], env);
    expect((await list('billing')).code).toBe(1); // no such table yet

    const only = await runCli(['migrate', '--config', config, '--store', 'billing'], env);
    expect(only.code, only.err).toBe(0);
    expect(only.out).toMatch(/^migrated billing: postgres \(postgres:\/\/\S+\): \S*mig_outbox"? is up to date\n$/);
    expect((await list('billing')).code).toBe(0);
    expect((await list('orders')).code).toBe(1);

    const all = await runCli(['migrate', '--config', config, '--json'], env);
    expect(all.code, all.err).toBe(0);
    expect(JSON.parse(all.out)).toMatchObject({
      command: 'migrate',
      ok: true,
      databases: [
        { name: 'orders', dialect: 'sqlite', table: expect.stringContaining('mig_outbox') },
        { name: 'billing', dialect: 'postgres', table: expect.stringContaining('mig_outbox') },
      ],
    });
    expect((await list('orders')).code).toBe(0);
  });

  it('doctor checks both, names each database in its checks, and picks the most upstream failure', async () => {
    // orders: its relay claims, but one consumer group fails every message (a consumer failure).
    await heartbeat(t.orders.store, Date.now());
    for (let i = 0; i < 5; i++)
      await addDeadLetter(t.orders.store, {
        group: 'payments',
        type: 'order.created',
        key: `o-${i}`,
        error: 'Error: card declined',
      });
    // billing: a message waits 20 min and its relay stopped claiming 20 min ago (a producer failure).
    await addOutbox(t.billing.store, 'invoice.issued', 'inv-1', Date.now() - 20 * MIN);
    await heartbeat(t.billing.store, Date.now() - 20 * MIN);
    const config = t.config();

    const res = await runCli(['doctor', '--config', config]);
    expect(res.code, res.out + res.err).toBe(4);
    expect(res.out).toContain(
      '  FAIL  billing: oldest pending message is 20 min old and no relay has claimed for 20 min',
    );
    expect(res.out).toContain('  ok    orders: no message is waiting to leave the outbox');
    expect(res.out).toContain('  FAIL  orders: consumer group payments fails every message: Error: card declined');
    expect(res.out).toContain(
      'verdict: producer: billing: oldest pending message is 20 min old and no relay has claimed for 20 min — the relay is down\n' +
        'next step: restart the relay (last seen: relay-a on app-1, pid 4242, 20 min ago)',
    );

    const report = JSON.parse((await runCli(['doctor', '--config', config, '--json'])).out);
    expect(report.verdict).toMatchObject({ place: 'producer', level: 'fail' });
    const byId = (id: string) =>
      report.checks
        .filter((c: { id: string }) => c.id === id)
        .map((c: { store: string; level: string }) => [c.store, c.level]);
    expect(byId('producer.pending')).toEqual([
      ['orders', 'ok'],
      ['billing', 'fail'],
    ]);
    expect(byId('consumer.failing')).toEqual([
      ['orders', 'fail'],
      ['billing', 'ok'],
    ]);

    // One database of several: its own verdict, still naming it, and its commands take its --store.
    const orders = await runCli(['doctor', '--config', config, '--store', 'orders']);
    expect(orders.code).toBe(4);
    expect(orders.out).toContain(
      'verdict: consumer: orders: consumer group payments fails every message: Error: card declined\n' +
        'next step: fix the handler of payments (see `surety dlq list --group payments --store orders`), then `surety dlq replay --all-matching --group payments --store orders`\n',
    );
  });

  it('every command the doctor suggests names its database; run as printed, it acts there', async () => {
    await heartbeat(t.orders.store, Date.now());
    await heartbeat(t.billing.store, Date.now());
    // The dead letters are in billing, the second database: a command without --store would act on orders.
    for (const key of ['inv-1', 'inv-2'])
      await addDeadLetter(t.billing.store, {
        group: 'ledger',
        type: 'invoice.issued',
        key,
        error: 'Error: no account',
        dead: true,
      });
    await addDeadLetter(t.orders.store, {
      group: 'ledger',
      type: 'order.created',
      key: 'o-1',
      error: 'Error: x',
      dead: true,
    });
    const config = t.config();
    const res = await runCli(['doctor', '--config', config]);
    expect(res.code, res.out + res.err).toBe(3);
    const suggested = [...res.out.matchAll(/`(surety [^`]*)`/g)].map((m) => m[1]!);
    const perDatabase = suggested.filter((c) => !/^surety (start|doctor)\b/.test(c));
    expect(perDatabase.length).toBeGreaterThan(1);
    for (const c of perDatabase) expect(c).toMatch(/ --store (orders|billing)$/);
    const replay = perDatabase.find((c) => c.startsWith('surety dlq replay') && c.endsWith('--store billing'));
    expect(replay).toBe('surety dlq replay --all-matching --status dead --store billing');

    const ran = await runCli([...replay!.split(' ').slice(1), '--config', config]);
    expect(ran.code, ran.err).toBe(0);
    expect((await t.billing.store.deadLetters.countDeadLetters('ledger')).pending).toBe(2);
    expect((await t.orders.store.deadLetters.countDeadLetters('ledger')).dead).toBe(1);
  });

  it('doctor reports a database it cannot read as unreachable, naming it, without its password', async () => {
    const path = join(t.dir, 'down.yaml');
    writeFileSync(
      path,
      `databases:\n  orders: { url: ${JSON.stringify(t.orders.database.url)} }\n  billing: { url: "postgres://app:hunter2@127.0.0.1:1/none" }\n`,
    );
    const res = await runCli(['doctor', '--config', path]);
    expect(res.code, res.out + res.err).toBe(4);
    expect(res.out).toMatch(/^verdict: producer: billing: the database is unreachable: .*ECONNREFUSED/m);
    expect(res.out + res.err).not.toContain('hunter2');
  });
});
