import { afterEach, describe, expect, it } from 'vitest';
import { createTestHarness, NotSettledError, type TestHarness, type TestHarnessOptions } from 'surety/testing';
import type { Registry } from 'prom-client';

// Each fault hook injected through the whole pipeline: the relay really retries, the inbox really dedupes.

const harnesses: TestHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

async function pipeline(options: Omit<TestHarnessOptions, 'store'> = {}) {
  const harness = await createTestHarness(options);
  harnesses.push(harness);
  const calls: string[] = [];
  const consumer = harness.consumer({ group: 'billing' }).on('order.created', async (order: { id: string }, { tx }) => {
    calls.push(order.id); // outside the transaction: counts every run of the handler
    await tx.query('INSERT INTO invoices (order_id) VALUES (?)', [order.id]);
  });
  await harness.store.transaction((tx) => tx.query('CREATE TABLE invoices (order_id TEXT PRIMARY KEY)'));
  await harness.start();
  const place = (id: string) =>
    harness.outbox.transaction((tx) => harness.outbox.add(tx, { type: 'order.created', key: id, payload: { id } }));
  const invoices = async () =>
    (await harness.store.transaction((tx) => tx.query('SELECT order_id FROM invoices ORDER BY order_id'))).rows.map(
      (r) => r.order_id,
    );
  const outboxRow = async (key: string) => (await harness.store.admin.listOutbox({ key }, { limit: 10 })).items[0]!;
  return { harness, consumer, calls, place, invoices, outboxRow };
}

async function deliveries(registry: Registry, outcome: string): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'surety_consumer_deliveries_total');
  return metric?.values.filter((v) => v.labels.outcome === outcome).reduce((n, v) => n + v.value, 0) ?? 0;
}

describe('harness faults', () => {
  it('failNextPublish: the relay records the failed attempt and publishes after its backoff', async () => {
    const { harness, place, invoices, outboxRow } = await pipeline();
    harness.faults.failNextPublish(2);
    await place('o-1');
    await harness.settled(); // the retry is 1 s of harness time away: nothing is due
    expect(harness.published()).toEqual([]);
    expect(await outboxRow('o-1')).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: expect.stringContaining('injected'),
    });
    harness.clock.advance(1_000);
    await harness.settled();
    expect(await outboxRow('o-1')).toMatchObject({ status: 'pending', attempts: 2 });
    harness.clock.advance(2_000); // the backoff doubled
    await harness.settled();
    expect(await outboxRow('o-1')).toMatchObject({ status: 'sent', attempts: 2 });
    expect(harness.published().map((p) => p.envelope.key)).toEqual(['o-1']);
    expect(await invoices()).toEqual(['o-1']);
  });

  it('failNextPublish with an error of your own', async () => {
    const { harness, place, outboxRow } = await pipeline({ relay: { maxAttempts: 1 } });
    harness.faults.failNextPublish(1, new Error('broker on fire'));
    await place('o-1');
    await harness.settled();
    expect(await outboxRow('o-1')).toMatchObject({
      status: 'dead',
      lastError: expect.stringContaining('broker on fire'),
    });
  });

  it('dropConnection: nothing is published until the connection is restored, and no attempt is charged', async () => {
    const { harness, place, invoices, outboxRow } = await pipeline();
    const restore = harness.faults.dropConnection();
    await place('o-1');
    const err = (await harness.settled({ timeoutMs: 300 }).catch((e: unknown) => e)) as NotSettledError;
    expect(err).toBeInstanceOf(NotSettledError);
    expect(err.outstanding.join('\n')).toMatch(/due now.*the connection is dropped/);
    expect(harness.published()).toEqual([]);
    // The relay's publisher (the harness's transport, faults in front) says not ready, and refuses a publish.
    const publisher = harness.relay.options.publisher;
    expect(publisher.isReady()).toBe(false);
    await expect(
      publisher.publish({ topic: 'order.created', message: { id: 'x', headers: {}, body: Buffer.from('{}') } }),
    ).rejects.toMatchObject({ code: 'SURETY_CONNECTION_LOST' });
    restore();
    await harness.settled();
    expect(publisher.isReady()).toBe(true);
    expect(await outboxRow('o-1')).toMatchObject({ status: 'sent', attempts: 0 });
    expect(await invoices()).toEqual(['o-1']);
  });

  it('dropConnection: a row due again waits for the connection, keeping its attempts', async () => {
    const { harness, place, outboxRow } = await pipeline();
    harness.faults.failNextPublish(1, new Error('first attempt fails'));
    await place('o-1');
    await harness.settled(); // failed once; due again in 1 s
    harness.faults.dropConnection();
    // The relay waits for the connection instead of claiming: the row stays as it was.
    harness.clock.advance(1_000);
    await expect(harness.settled({ timeoutMs: 200 })).rejects.toBeInstanceOf(NotSettledError);
    expect(await outboxRow('o-1')).toMatchObject({ status: 'pending', attempts: 1 });
    harness.faults.restoreConnection();
    await harness.settled();
    expect(await outboxRow('o-1')).toMatchObject({ status: 'sent', attempts: 1 });
  });

  it('deliverTwice: the copy reaches the consumer, whose inbox skips it; the handler runs once', async () => {
    const { harness, consumer, calls, place, invoices } = await pipeline();
    harness.faults.deliverTwice((envelope) => envelope.key === 'o-2');
    await place('o-1');
    await place('o-2');
    await place('o-3');
    await harness.settled();
    expect(calls).toEqual(['o-1', 'o-2', 'o-3']);
    expect(await invoices()).toEqual(['o-1', 'o-2', 'o-3']);
    expect(await deliveries(consumer.metricsRegistry, 'duplicate')).toBe(1);
    expect(await deliveries(consumer.metricsRegistry, 'handled')).toBe(3);
    expect(await harness.handled()).toHaveLength(3);
  });

  it('crashAfterCommit: the relay still publishes the message, by its own claim', async () => {
    const { harness, place, invoices } = await pipeline();
    harness.faults.crashAfterCommit();
    await place('o-1');
    await harness.settled();
    expect(harness.published().map((p) => p.envelope.key)).toEqual(['o-1']);
    expect(await invoices()).toEqual(['o-1']);
  });

  it('crashAfterCommit: the commit does not wake the relay (with a slow poll, it waits for the next claim)', async () => {
    const { harness, place, invoices } = await pipeline({ relay: { pollIntervalMs: 600_000 } });
    harness.faults.crashAfterCommit();
    await place('o-1');
    const err = (await harness.settled({ timeoutMs: 300 }).catch((e: unknown) => e)) as NotSettledError;
    expect(err.outstanding).toEqual([expect.stringMatching(/outbox row order\.created .*key o-1.*due now/)]);
    await place('o-2'); // a commit that wakes the relay: its claim takes both rows
    await harness.settled();
    expect(
      harness
        .published()
        .map((p) => p.envelope.key)
        .sort(),
    ).toEqual(['o-1', 'o-2']);
    expect(await invoices()).toEqual(['o-1', 'o-2']);
  });
});
