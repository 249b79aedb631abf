/**
 * One console over several databases: the order service's outbox in SQLite ("orders") and
 * billing's inbox and dead letters in PostgreSQL ("billing"), served by one admin server. Lineage
 * and the overview merge both stores; every other route works on the store `?store=` names.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp, type AdminApp } from '../../src/admin/index.js';
import { Consumer } from '../../src/consumer/consumer.js';
import { ReplayJob } from '../../src/consumer/replay-job.js';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createEmbeddedTransport } from '../../src/transports/embedded/index.js';
import type { StoreFixture } from '../conformance/outbox-store-suite.js';
import { newToken } from '../support/admin-http.js';
import { startMultiStoreFixture, type MultiStoreFixture } from '../support/admin-multi-store.js';
import { newRow } from '../support/rows.js';
import { seedDeadLetters, seedOutbox, type AdminTestStore } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { storeFixtures } from '../support/stores.js';
import { ManualClock, waitFor } from '../support/wait.js';

const UNKNOWN_ID = '0194b7a0-0000-7000-8000-00000000abcd';

describe('one admin server over SQLite ("orders") and PostgreSQL ("billing")', () => {
  let fx: MultiStoreFixture;
  let orders: AdminTestStore;
  let billing: AdminTestStore;
  /** A dead letter in each store with the same row id. */
  let twin: { id: number; ordersMessage: string; billingMessage: string };
  const twinGroup = uniqueName('twin');

  const as = (token: string) => (method: string, path: string, body?: unknown) =>
    fx.api.call(method, path, { token, body });
  const op = (method: string, path: string, body?: unknown) => as(fx.tokens.operator)(method, path, body);
  const view = (path: string) => as(fx.tokens.viewer)('GET', path);

  beforeAll(async () => {
    fx = await startMultiStoreFixture({ orders: 'sqlite', billing: 'postgres' });
    orders = fx.stores.orders!;
    billing = fx.stores.billing!;
    // Each store's first dead letter: fresh tables number both rows 1.
    const [a] = await seedDeadLetters(orders, 1, { group: twinGroup, status: 'dead' });
    const [b] = await seedDeadLetters(billing, 1, { group: twinGroup, status: 'dead' });
    twin = { id: a!.id, ordersMessage: a!.messageId, billingMessage: b!.messageId };
  });
  afterAll(async () => fx?.close());

  it('lists the stores in the order given, the first as the default', async () => {
    const res = await view('/api/stores');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      stores: [
        { name: 'orders', dialect: 'sqlite', default: true },
        { name: 'billing', dialect: 'postgres', default: false },
      ],
    });
    expect((await fx.api.call('GET', '/api/stores')).status).toBe(401);
  });

  it("follows one message from orders' outbox to billing's dead letter and inbox", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'surety-multi-'));
    const transport = createEmbeddedTransport({ path: join(dir, 'log.sqlite'), pollIntervalMs: 20 });
    const group = uniqueName('billing');
    const relay = new OutboxRelay({ store: orders, publisher: transport, logger: silentLogger, retention: false });
    let calls = 0;
    const consumer = new Consumer({
      group,
      store: billing,
      transport,
      logger: silentLogger,
      batchWindowMs: 5,
      deadLetters: { scheduleMs: [0] },
    }).on('order.created', async () => {
      if (++calls === 1) throw new Error('billing downstream unavailable');
    });
    try {
      const outbox = new Outbox({ store: orders });
      const { messageId } = await outbox.transaction((tx) =>
        outbox.add(tx, { type: 'order.created', key: 'o-77', payload: { total: 77 } }),
      );
      expect(await relay.runOnce()).toBe(1);
      await consumer.start();
      await waitFor(
        'the dead letter in billing',
        async () => (await billing.deadLetters.getDeadLetter(messageId, group)) !== undefined,
      );

      // Failed once: the outbox row in orders, the dead letter in billing, no inbox record yet.
      const failed = await view(`/api/messages/${messageId}/lineage`);
      expect(failed.status, failed.text).toBe(200);
      expect(failed.body).toMatchObject({
        messageId,
        outbox: { store: 'orders', messageId, status: 'sent', type: 'order.created' },
        inbox: [],
        deadLetters: [{ store: 'billing', group, status: 'pending', history: [{ kind: 'failed' }] }],
        unavailable: [],
      });

      const replay = new ReplayJob(consumer, { owner: 'replayer-multi', ratePerSecond: 1_000 });
      await waitFor('the replay', async () => {
        await replay.runOnce();
        return (await billing.deadLetters.getDeadLetter(messageId, group))?.status === 'resolved';
      });
      const res = await view(`/api/messages/${messageId}/lineage`);
      expect(res.status, res.text).toBe(200);
      const lineage = res.body;
      expect(lineage.outbox).toMatchObject({ store: 'orders', status: 'sent', sentAt: expect.any(Number) });
      expect(lineage.inbox).toEqual([{ store: 'billing', group, recordedAt: expect.any(Number) }]);
      expect(lineage.deadLetters).toHaveLength(1);
      expect(lineage.deadLetters[0]).toMatchObject({
        store: 'billing',
        group,
        status: 'resolved',
        history: [{ kind: 'failed' }, { kind: 'resolved', actor: 'replayer-multi' }],
      });
      // Written in orders, sent, failed in billing, handled on replay: in that order across both databases.
      const times = [
        lineage.outbox.createdAt,
        lineage.outbox.sentAt,
        lineage.deadLetters[0].createdAt,
        lineage.inbox[0].recordedAt,
      ];
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      // Neither store alone has the whole story.
      expect((await orders.admin.lineage(messageId))!.deadLetters).toEqual([]);
      expect((await billing.admin.lineage(messageId))!.outbox).toBeNull();
    } finally {
      await consumer.stop();
      await relay.stop();
      await transport.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers 404 only when no store knows the message', async () => {
    const res = await view(`/api/messages/${UNKNOWN_ID}/lineage`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('SURETY_NOT_FOUND');
    const onlyBilling = await view(`/api/messages/${twin.billingMessage}/lineage`);
    expect(onlyBilling.status).toBe(200);
    expect(onlyBilling.body).toMatchObject({
      outbox: null,
      inbox: [],
      deadLetters: [{ store: 'billing', id: twin.id }],
    });
  });

  it('takes the outbox row from the first store that has it', async () => {
    const row = newRow({ createdAt: Date.now() });
    for (const store of [billing, orders]) {
      await store.transaction((tx) => store.outbox.insert(tx, row, { ordered: false }));
    }
    const res = await view(`/api/messages/${row.messageId}/lineage`);
    expect(res.body.outbox).toMatchObject({ store: 'orders', messageId: row.messageId });
    expect((await view(`/api/outbox/${row.messageId}?store=billing`)).body.messageId).toBe(row.messageId);
  });

  it('replays the same dead-letter id in billing only, and audits it in billing only', async () => {
    const before = await orders.admin.lineage(twin.ordersMessage);
    const rowA = await view(`/api/dead-letters/${twin.id}`);
    const rowB = await view(`/api/dead-letters/${twin.id}?store=billing`);
    expect(rowA.body).toMatchObject({ id: twin.id, messageId: twin.ordersMessage });
    expect(rowB.body).toMatchObject({ id: twin.id, messageId: twin.billingMessage });

    const res = await op('POST', `/api/dead-letters/${twin.id}/replay?store=billing`, { reason: 'billing fixed' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.changed).toBe(true);

    expect((await billing.admin.getDeadLetterById(twin.id))!.status).toBe('pending');
    const history = (await billing.admin.lineage(twin.billingMessage))!.deadLetters[0]!.history;
    expect(history.at(-1)).toMatchObject({ kind: 'replay_requested', actor: 'alice' });
    expect(await orders.admin.lineage(twin.ordersMessage)).toEqual(before);
    expect((await orders.admin.getDeadLetterById(twin.id))!.status).toBe('dead');

    const target = `dlq:${twin.id}`;
    const auditB = await view(`/api/audit?store=billing&action=dlq.replay&target=${target}`);
    expect(auditB.body).toMatchObject({
      store: 'billing',
      items: [{ actor: 'alice', action: 'dlq.replay', target, reason: 'billing fixed', outcome: 'ok' }],
    });
    const auditA = await view(`/api/audit?action=dlq.replay&target=${target}`);
    expect(auditA.body).toEqual({ items: [], nextBefore: null, store: 'orders' });
    expect((await orders.admin.listAudit({}, { limit: 500 })).items.filter((e) => e.target === target)).toEqual([]);
  });

  it('pages name their store and hold only its rows', async () => {
    const a = await view(`/api/dead-letters?group=${twinGroup}`);
    const b = await view(`/api/dead-letters?group=${twinGroup}&store=billing`);
    expect(a.body).toMatchObject({ store: 'orders', items: [{ messageId: twin.ordersMessage }] });
    expect(b.body).toMatchObject({ store: 'billing', items: [{ messageId: twin.billingMessage }] });
    expect((await view('/api/outbox?store=orders&limit=1')).body.store).toBe('orders');
    expect((await view('/api/jobs?store=billing')).body.store).toBe('billing');
  });

  it('refuses an unknown store with a 400 naming the allowed ones, and changes nothing', async () => {
    const auditBefore = [
      await orders.admin.listAudit({}, { limit: 500 }),
      await billing.admin.listAudit({}, { limit: 500 }),
    ];
    const paths: [string, string, unknown?][] = [
      ['GET', '/api/dead-letters?store=invoices'],
      ['GET', `/api/dead-letters/${twin.id}?store=invoices`],
      ['POST', `/api/dead-letters/${twin.id}/ignore?store=invoices`, { reason: 'x' }],
      ['POST', `/api/outbox/${UNKNOWN_ID}/resend?store=invoices`, {}],
      ['POST', '/api/jobs?store=invoices', { kind: 'dlq.replay', filter: { group: twinGroup } }],
      ['GET', '/api/audit?store=invoices'],
      ['GET', '/api/jobs/1?store=invoices'],
    ];
    for (const [method, path, body] of paths) {
      const res = await op(method, path, body);
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(res.body.error).toMatchObject({
        code: 'SURETY_INVALID_INPUT',
        message: 'query.store: unknown store "invoices"; allowed: orders, billing',
        issues: [{ path: 'query.store' }],
      });
    }
    expect([
      await orders.admin.listAudit({}, { limit: 500 }),
      await billing.admin.listAudit({}, { limit: 500 }),
    ]).toEqual(auditBefore);
  });

  it('answers malformed store values with a specific 400', async () => {
    const cases: [string, RegExp][] = [
      ['/api/dead-letters?store=', /query\.store: must be a store name/],
      ['/api/dead-letters?store=1orders', /query\.store: must be a store name/],
      ['/api/dead-letters?store=or%20ders', /query\.store: must be a store name/],
      [`/api/outbox?store=${'a'.repeat(41)}`, /query\.store: must be a store name.*at most 40/],
      ['/api/audit?store=orders&store=billing', /query\.store: must be given once/],
      [`/api/dead-letters/${twin.id}?store=%00`, /query\.store: must be a store name/],
      [`/api/dead-letters/${twin.id}?stor=billing`, /query: .*stor/i],
      ['/api/jobs?store=billing;drop', /query\.store: must be a store name/],
    ];
    for (const [path, message] of cases) {
      const res = await view(path);
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(res.body.error.code, path).toBe('SURETY_INVALID_INPUT');
      expect(res.body.error.message, path).toMatch(message);
    }
    const action = await op('POST', `/api/dead-letters/${twin.id}/replay?store=bil*ing`, {});
    expect(action.status).toBe(400);
    expect(action.body.error.issues[0].path).toBe('query.store');
  });

  it('merges the overview: sums, the oldest pending time, per-minute throughput, tagged items, and each store', async () => {
    const now = Date.now();
    await seedOutbox(orders, 3, now - 120_000);
    await seedOutbox(billing, 2, now - 600_000);
    const group = uniqueName('ovw');
    await seedDeadLetters(billing, 4, { group, status: 'dead', error: 'ledger locked' });
    await orders.heartbeats.recordHeartbeat({
      relayId: 'relay-orders',
      host: 'h',
      pid: 1,
      startedAt: now,
      lastClaimedAt: now,
      lastSeenAt: now,
    });

    const res = await view('/api/overview');
    expect(res.status, res.text).toBe(200);
    const merged = res.body;
    const [a, b] = [await orders.admin.overview(Date.now()), await billing.admin.overview(Date.now())];
    expect(merged.stores.map((s: { name: string }) => s.name)).toEqual(['orders', 'billing']);
    expect(merged.stores[0].overview.outbox).toEqual(a.outbox);
    expect(merged.stores[1].overview.deadLetters).toEqual(b.deadLetters);
    expect(merged.unavailable).toEqual([]);

    expect(merged.outbox).toEqual({
      pending: a.outbox.pending + b.outbox.pending,
      sent: a.outbox.sent + b.outbox.sent,
      dead: a.outbox.dead + b.outbox.dead,
      oldestPendingAt: Math.min(a.outbox.oldestPendingAt!, b.outbox.oldestPendingAt!),
    });
    expect(merged.outbox.oldestPendingAt).toBe(b.outbox.oldestPendingAt);
    for (const status of ['pending', 'replaying', 'resolved', 'ignored', 'dead'] as const) {
      expect(merged.deadLetters[status], status).toBe(a.deadLetters[status] + b.deadLetters[status]);
    }
    expect(merged.inboxSize).toBe(a.inboxSize + b.inboxSize);
    expect(merged.expiredLeases).toBe(a.expiredLeases + b.expiredLeases);
    const total = (rows: { sent: number; consumed: number }[]) =>
      rows.reduce((n, r) => n + r.sent * 1_000 + r.consumed, 0);
    expect(total(merged.throughput)).toBe(total(a.throughput) + total(b.throughput));
    expect(merged.throughput.length).toBeGreaterThanOrEqual(60);
    const minutes = merged.throughput.map((t: { minute: number }) => t.minute);
    expect(new Set(minutes).size).toBe(minutes.length);

    expect(merged.deadLetterGroups).toContainEqual(
      expect.objectContaining({ store: 'billing', group, error: 'ledger locked', count: 4 }),
    );
    expect(merged.deadLetterGroups).toContainEqual(
      expect.objectContaining({ store: 'orders', group: twinGroup, count: 1 }),
    );
    const counts = merged.deadLetterGroups.map((g: { count: number }) => g.count);
    expect(counts).toEqual([...counts].sort((x: number, y: number) => y - x));
    expect(merged.relays).toEqual([expect.objectContaining({ store: 'orders', relayId: 'relay-orders' })]);
    expect(merged.stores[0].overview.relays[0]).not.toHaveProperty('store');
  });

  it('runs a job created with ?store= in that store only', async () => {
    const group = uniqueName('bulk');
    const inBilling = await seedDeadLetters(billing, 6, { group, status: 'dead' });
    const inOrders = await seedDeadLetters(orders, 3, { group, status: 'dead' });
    const created = await op('POST', '/api/jobs?store=billing', {
      kind: 'dlq.replay',
      filter: { group },
      reason: 'billing is back',
      ratePerSecond: 1_000,
    });
    expect(created.status, created.text).toBe(202);
    const job = created.body.job;
    expect(job.total).toBe(6);
    await waitFor('the job done in billing', async () => {
      const res = await view(`/api/jobs/${job.id}?store=billing`);
      return res.body.status === 'done';
    });
    expect((await view(`/api/jobs/${job.id}?store=billing`)).body).toMatchObject({ done: 6, changed: 6 });
    for (const row of inBilling) expect((await billing.admin.getDeadLetterById(row.id))!.status).toBe('pending');
    for (const row of inOrders) expect((await orders.admin.getDeadLetterById(row.id))!.status).toBe('dead');
    const jobsInOrders = (await orders.admin.listJobs({ limit: 500 })).items;
    expect(jobsInOrders.filter((j) => j.reason === 'billing is back')).toEqual([]);
    const audit = await view(`/api/audit?store=billing&action=job.create&target=job:${job.id}`);
    expect(audit.body.items).toHaveLength(1);

    const cancel = await op('POST', `/api/jobs/${job.id}/cancel?store=billing`, {});
    expect(cancel.status).toBe(409); // done already: the cancel reached billing's job
  });

  it('describes the stores and the store parameter in the OpenAPI document', async () => {
    const doc = (await view('/api/openapi.json')).body;
    expect(doc.paths['/api/stores'].get).toBeDefined();
    const takesStore = Object.entries(doc.paths as Record<string, Record<string, { parameters?: { name: string }[] }>>)
      .flatMap(([path, ops]) => Object.entries(ops).map(([m, o]) => [`${m.toUpperCase()} ${path}`, o] as const))
      .filter(([, o]) => o.parameters?.some((p) => p.name === 'store'))
      .map(([route]) => route)
      .sort();
    expect(takesStore).toEqual(
      [
        'GET /api/audit',
        'GET /api/dead-letters',
        'GET /api/dead-letters/{id}',
        'POST /api/dead-letters/{id}/replay',
        'POST /api/dead-letters/{id}/ignore',
        'POST /api/dead-letters/{id}/edit',
        'GET /api/jobs',
        'POST /api/jobs',
        'GET /api/jobs/{id}',
        'POST /api/jobs/{id}/cancel',
        'GET /api/outbox',
        'GET /api/outbox/{messageId}',
        'POST /api/outbox/{messageId}/resend',
      ].sort(),
    );
    expect(Object.keys(doc.components.schemas.Lineage.properties)).toContain('unavailable');
    expect(Object.keys(doc.components.schemas.Overview.properties)).toEqual(
      expect.arrayContaining(['stores', 'unavailable', 'deadLetterGroups']),
    );
  });

  it('labels the admin gauges with the store', async () => {
    const res = await view('/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/surety_dead_letters\{status="dead",store="billing"\} \d+/);
    expect(res.text).toMatch(/surety_outbox_rows\{status="pending",store="orders"\} \d+/);
    expect(res.text).toMatch(/surety_admin_store_up\{store="orders"\} 1/);
    expect(res.text).toMatch(/surety_admin_store_up\{store="billing"\} 1/);
  });
});

describe('a store whose database is down', () => {
  const token = newToken('ops');
  const fixtures: StoreFixture[] = [];
  afterAll(async () => {
    for (const f of fixtures) await f.teardown().catch(() => undefined);
  });

  const app = (stores: Record<string, AdminTestStore>, extra: Partial<Parameters<typeof createAdminApp>[0]> = {}) =>
    createAdminApp({
      stores,
      tokens: [{ name: 'ops', role: 'operator', token }],
      consoleDir: false,
      jobs: { enabled: false },
      ...extra,
    });
  const get = (admin: AdminApp, path: string) =>
    admin.fetch(new Request(`http://x${path}`, { headers: { authorization: `Bearer ${token}` } }));

  it('shows in `unavailable` while the other store still answers (SQLite closed, PostgreSQL schema dropped)', async () => {
    const ordersF = await storeFixtures.sqlite('down_orders');
    const billingF = await storeFixtures.postgres('down_billing');
    const ledgerF = await makePostgresFixture('down_ledger');
    fixtures.push(ordersF, billingF, ledgerF);
    const orders = ordersF.store as AdminTestStore;
    const billing = billingF.store as AdminTestStore;
    const ledger = ledgerF.store as AdminTestStore;
    const [messageId] = await seedOutbox(orders, 1);
    const group = uniqueName('g');
    await billing.transaction((tx) => billing.inbox.recordInbox(tx, messageId!, group, Date.now()));
    await seedDeadLetters(billing, 1, { group, status: 'dead' });
    const clock = new ManualClock(Date.now());
    const admin = app({ orders, billing, ledger }, { clock });
    try {
      expect((await get(admin, `/api/messages/${messageId}/lineage`)).status).toBe(200);
      expect((await get(admin, '/readyz')).status).toBe(200);

      await orders.close(); // the SQLite connection is gone for real
      // The ledger's tables are gone: its queries fail in the database.
      await ledgerF.pool.query(`DROP SCHEMA "${ledgerF.schema}" CASCADE`);

      const res = await get(admin, `/api/messages/${messageId}/lineage`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        outbox: null,
        inbox: [{ store: 'billing', group }],
        unavailable: [
          { store: 'orders', error: 'the database did not answer' },
          { store: 'ledger', error: 'the database did not answer' },
        ],
      });
      expect(JSON.stringify(body)).not.toMatch(/sqlite|relation|schema|not open/i);

      // An id no answering store knows: not a 404, since a missing store may know it.
      const unknown = await get(admin, `/api/messages/${UNKNOWN_ID}/lineage`);
      expect(unknown.status).toBe(200);
      expect(await unknown.json()).toMatchObject({ outbox: null, inbox: [], deadLetters: [], unavailable: [{}, {}] });

      const overview = await get(admin, '/api/overview');
      expect(overview.status).toBe(200);
      const o = (await overview.json()) as { stores: { name: string }[]; unavailable: { store: string }[] };
      expect(o.stores.map((s) => s.name)).toEqual(['billing']);
      expect(o.unavailable.map((u) => u.store)).toEqual(['orders', 'ledger']);

      // Readiness is a shared answer, reused for 1 s.
      expect((await get(admin, '/readyz')).status).toBe(200);
      clock.advance(1_000);
      expect((await get(admin, '/readyz')).status).toBe(503);
      const metrics = await (await get(admin, '/metrics')).text();
      expect(metrics).toMatch(/surety_admin_store_up\{store="orders"\} 0/);
      expect(metrics).toMatch(/surety_admin_store_up\{store="billing"\} 1/);
      expect(metrics).not.toMatch(/surety_dead_letters\{status="dead",store="orders"\}/);
      // Reads of a single store fail as they did with one store.
      expect((await get(admin, '/api/dead-letters?store=orders')).status).toBe(503);
      expect((await get(admin, '/api/dead-letters?store=billing')).status).toBe(200);
    } finally {
      await admin.close();
    }
  });

  it('answers 503 when every store is down', async () => {
    const f = await storeFixtures.sqlite('down_all');
    fixtures.push(f);
    const admin = app({ only: f.store as AdminTestStore });
    try {
      await f.store.close();
      expect((await get(admin, `/api/messages/${UNKNOWN_ID}/lineage`)).status).toBe(503);
      expect((await get(admin, '/api/overview')).status).toBe(503);
    } finally {
      await admin.close();
    }
  });

  it('reports a store that does not answer at all once the timeout passes', async () => {
    // A server that accepts connections and never says a word: the PostgreSQL handshake hangs.
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => void sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', database: 'test' });
    pool.on('error', () => undefined);
    const hung = await createPostgresStore({ pool, schema: uniqueName('hung') });
    const f = await storeFixtures.sqlite('hung_orders');
    fixtures.push(f);
    const [messageId] = await seedOutbox(f.store as AdminTestStore, 1);
    const admin = app(
      { orders: f.store as AdminTestStore, stuck: hung as unknown as AdminTestStore },
      {
        storeTimeoutMs: 300,
      },
    );
    try {
      const started = Date.now();
      const res = await get(admin, `/api/messages/${messageId}/lineage`);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        outbox: { store: 'orders', messageId },
        unavailable: [{ store: 'stuck', error: 'the database did not answer within 300 ms' }],
      });
    } finally {
      await admin.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
      await pool.end().catch(() => undefined);
    }
  });
});

describe('the stores option', () => {
  it('takes exactly one of store and stores, with valid names, naming the option', async () => {
    const f = await storeFixtures.sqlite('stores_option');
    try {
      const store = f.store as AdminTestStore;
      const tokens = [{ name: 'ops', role: 'operator' as const, token: newToken('ops') }];
      const make = (o: object) => () => createAdminApp({ tokens, consoleDir: false, ...o });
      expect(make({ store, stores: { a: store } })).toThrow(/admin\.stores.*either store or stores/);
      expect(make({})).toThrow(/admin\.store.*or give stores/);
      expect(make({ stores: {} })).toThrow(/admin\.stores.*at least one/);
      expect(make({ stores: { 'bad name': store } })).toThrow(/admin\.stores\.bad name.*store name/);
      expect(make({ stores: { '9lives': store } })).toThrow(/admin\.stores\.9lives/);
      expect(make({ stores: { ok: store, broken: {} } })).toThrow(/admin\.stores\.broken.*Surety store/);
      const one = createAdminApp({ tokens, consoleDir: false, stores: { orders: store }, jobs: { enabled: false } });
      expect(one.stores.names).toEqual(['orders']);
      expect(one.service).toBe(one.stores.get('orders').service);
      await one.close();
    } finally {
      await f.teardown();
    }
  });
});
