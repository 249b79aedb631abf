/**
 * /metrics serves the app's registry and every registry given beside it (consumers' own), as one
 * exposition; the OpenAPI document describes /metrics and itself.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Consumer } from '../../src/consumer/consumer.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { createEmbeddedTransport, type EmbeddedTransport } from '../../src/transports/embedded/index.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { startTestAdminServer, type TestAdminServer } from '../support/admin-fixture.js';
import { seedOutbox, type AdminTestStore } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

describe('admin /metrics and the OpenAPI document (SQLite, embedded log)', () => {
  let f: Awaited<ReturnType<typeof makeSqliteFixture>>;
  let transport: EmbeddedTransport;
  let relay: OutboxRelay;
  let consumers: Consumer[];
  let admin: TestAdminServer;
  const logPath = join(tmpdir(), `${uniqueName('metrics_log')}.sqlite`);

  beforeAll(async () => {
    f = await makeSqliteFixture('metrics');
    const store = f.store as unknown as AdminTestStore & ConsumerStore;
    transport = await createEmbeddedTransport({ path: logPath, pollIntervalMs: 20, logger: null });
    // The relay on the app's registry; two consumers on registries of their own (a module's, say).
    const registry = new Registry();
    relay = new OutboxRelay({ store, publisher: transport, logger: null, registry, pollIntervalMs: 50 });
    consumers = ['billing', 'shipping'].map((group) =>
      new Consumer({ group, store, transport, logger: null, batchSize: 1 }).on('order.created', async () => {
        if (group === 'shipping') throw new Error('no address');
      }),
    );
    for (const c of consumers) await c.start();
    await relay.start();
    await seedOutbox(store, 1);
    // Counted as each delivery settles, after its commit.
    const counted = async (c: Consumer, outcome: string) =>
      (await c.metricsRegistry.getSingleMetricAsString('surety_consumer_deliveries_total')).includes(
        `outcome="${outcome}"} 1`,
      );
    await waitFor(
      'billing handled it and shipping recorded its failure',
      async () => (await counted(consumers[0]!, 'handled')) && (await counted(consumers[1]!, 'failed')),
    );
    admin = await startTestAdminServer({
      store,
      consoleDir: false,
      registry,
      registries: consumers.map((c) => c.metricsRegistry),
    });
  });
  afterAll(async () => {
    await admin?.server.close();
    for (const c of consumers ?? []) await c.stop();
    await relay?.stop();
    await transport?.close();
    await f?.teardown();
    rmSync(logPath, { force: true });
  });

  it("serves the relay's metrics and both consumers' registries as one exposition", async () => {
    const res = await admin.api.call('GET', '/metrics', { token: admin.tokens.viewer });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toMatch(/^surety_relay_publish_attempts_total\{outcome="confirmed"\} 1$/m);
    const text = res.text;
    expect(text).toMatch(/^surety_consumer_deliveries_total\{group="billing",outcome="handled"\} 1$/m);
    expect(text).toMatch(/^surety_consumer_deliveries_total\{group="shipping",outcome="failed"\} 1$/m);
    expect(text).toMatch(/^surety_consumer_batch_duration_seconds_count\{group="billing"\} 1$/m);
    expect(text).toMatch(/^surety_dead_letters\{status="pending",store="default"\} 1$/m);
    // One family per name, however many registries hold it.
    expect(text.match(/^# TYPE surety_consumer_deliveries_total counter$/gm)).toHaveLength(1);
  });

  it('describes /metrics and itself', async () => {
    const doc = (await admin.api.call('GET', '/api/openapi.json', { token: admin.tokens.viewer })).body as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    expect(Object.keys(doc.paths['/metrics']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/metrics']!.get!.responses['200']!.content!)).toEqual(['text/plain']);
    expect(Object.keys(doc.paths['/api/openapi.json']!.get!.responses['200']!.content!)).toEqual(['application/json']);
  });
});
