import { afterEach, describe, expect, it } from 'vitest';
import { PermanentError } from 'surety';
import { createTestHarness, NotSettledError, type TestHarness } from 'surety/testing';
import type { SqliteStore } from 'surety/sqlite';

// The harness as the docs show it: an order service's outbox and a billing consumer, in process.

interface Order {
  id: string;
  total: number;
}

const harnesses: TestHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

async function billing(handle?: (order: Order) => void): Promise<TestHarness<SqliteStore>> {
  const harness = await createTestHarness();
  harnesses.push(harness);
  await harness.store.transaction((tx) => tx.query('CREATE TABLE invoices (order_id TEXT PRIMARY KEY, total INTEGER)'));
  harness.consumer({ group: 'billing' }).on('order.created', async (order: Order, { tx }) => {
    handle?.(order);
    if (order.total < 0) throw new PermanentError('negative total');
    await tx.query('INSERT INTO invoices (order_id, total) VALUES (?, ?)', [order.id, order.total]);
  });
  return harness;
}

function placeOrder(harness: TestHarness, order: Order) {
  return harness.outbox.transaction((tx) =>
    harness.outbox.add(tx, { type: 'order.created', key: order.id, payload: order }),
  );
}

async function invoices(harness: TestHarness<SqliteStore>) {
  return (await harness.store.transaction((tx) => tx.query('SELECT order_id, total FROM invoices ORDER BY order_id')))
    .rows;
}

describe('createTestHarness', () => {
  it('settles once every committed message is published and handled', async () => {
    const harness = await billing();
    await harness.start();
    for (let i = 1; i <= 20; i++) await placeOrder(harness, { id: `o-${String(i).padStart(2, '0')}`, total: i });
    await harness.settled();
    expect(harness.published()).toHaveLength(20);
    expect(harness.published()[0]).toMatchObject({
      topic: 'order.created',
      envelope: { key: 'o-01', payload: { id: 'o-01', total: 1 } },
    });
    expect((await harness.handled('billing')).map((h) => h.envelope.key)).toHaveLength(20);
    expect(await invoices(harness)).toHaveLength(20);
    expect(await harness.outstanding()).toEqual([]);
  });

  it('throws what is outstanding when it does not settle in time', async () => {
    const harness = await billing();
    await placeOrder(harness, { id: 'o-1', total: 5 }); // committed before start(): nothing publishes it yet
    const err = await harness.settled({ timeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotSettledError);
    expect(err).toMatchObject({ code: 'SURETY_NOT_SETTLED' });
    expect((err as NotSettledError).outstanding).toEqual([
      expect.stringMatching(/^outbox row order\.created .* due now/),
    ]);
    await harness.start();
    await harness.settled();
    expect(await invoices(harness)).toEqual([{ order_id: 'o-1', total: 5 }]);
  });

  it('leaves a retry scheduled later to the clock, and replays it when the clock gets there', async () => {
    let failures = 1;
    const harness = await billing(() => {
      if (failures-- > 0) throw new Error('payment service down');
    });
    await harness.start();
    await placeOrder(harness, { id: 'o-1', total: 5 });
    await harness.settled(); // the failure is recorded; its retry is a minute away
    const [pending] = await harness.deadLettered('billing');
    expect(pending).toMatchObject({ status: 'pending', attempts: 1, nextRetryAt: harness.clock.now() + 60_000 });
    expect(pending!.envelope).toMatchObject({ key: 'o-1', payload: { id: 'o-1', total: 5 } });
    expect(await harness.handled()).toEqual([]);

    harness.clock.advance(59_999);
    await harness.settled();
    expect(await invoices(harness)).toEqual([]);
    harness.clock.advance(1);
    await harness.settled();
    expect(await invoices(harness)).toEqual([{ order_id: 'o-1', total: 5 }]);
    expect(await harness.deadLettered()).toMatchObject([{ status: 'resolved' }]);
    expect((await harness.handled()).map((h) => h.group)).toEqual(['billing']);
  });

  it('dead-letters a permanent failure at once', async () => {
    const harness = await billing();
    await harness.start();
    await placeOrder(harness, { id: 'o-1', total: -1 });
    await harness.settled();
    expect(await harness.deadLettered('billing')).toMatchObject([
      { status: 'dead', attempts: 1, lastError: expect.stringContaining('negative total') },
    ]);
    expect(await harness.deadLettered('shipping')).toEqual([]);
  });

  it('without replay jobs, a dead letter due for replay is left to you', async () => {
    const harness = await createTestHarness({ replay: false, startAt: Date.UTC(2030, 0, 1) });
    harnesses.push(harness);
    harness.consumer({ group: 'billing' }).on('order.created', async () => {
      throw new Error('payment service down');
    });
    await harness.start();
    await placeOrder(harness, { id: 'o-1', total: 5 });
    await harness.settled();
    harness.clock.advance(60_000);
    await harness.settled();
    expect(await harness.deadLettered()).toMatchObject([
      { status: 'pending', attempts: 1, nextRetryAt: Date.UTC(2030, 0, 1, 0, 1) },
    ]);
  });

  it('validates its options once, naming the one at fault', async () => {
    await expect(createTestHarness({ settleTimeoutMs: 0 })).rejects.toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      message: expect.stringContaining('harness.settleTimeoutMs'),
    });
    await expect(createTestHarness({ relay: { batchSize: 0 } })).rejects.toMatchObject({
      code: 'SURETY_INVALID_OPTION',
      message: expect.stringContaining('relay.batchSize'),
    });
  });

  it('refuses consumers added after start(), and calls after close()', async () => {
    const harness = await billing();
    await harness.start();
    expect(() => harness.consumer({ group: 'late' })).toThrow(/before harness.start/);
    await harness.close();
    await expect(harness.settled()).rejects.toThrow(/closed/);
  });
});
