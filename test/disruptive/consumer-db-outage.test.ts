/** Stops PostgreSQL: runs alone (vitest.disruptive.config.ts), never beside other tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
import { createEmbeddedTransport } from '../../src/transports/embedded/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { effectsTable, wire } from '../support/consumer-env.js';
import { startPostgres, stopPostgres } from '../support/db-control.js';
import { waitFor } from '../support/wait.js';

describe('the consumer database stopped during consumption', () => {
  afterAll(async () => {
    await startPostgres(); // never leave it down
  });

  it('acks nothing while it is down, does not spin, and loses nothing', async () => {
    const f = await makePostgresFixture('dbdown');
    const effects = await effectsTable(f);
    const dir = mkdtempSync(join(tmpdir(), 'surety-dbdown-'));
    const transport = await createEmbeddedTransport({ path: join(dir, 'log.sqlite'), pollIntervalMs: 20 });
    const store = f.store as unknown as ConsumerStore;
    let transactions = 0;
    const counting: ConsumerStore = {
      ...store,
      transaction: (work) => {
        transactions++;
        return store.transaction(work);
      },
    };
    const consumer = new Consumer({
      group: 'billing',
      store: counting,
      transport,
      logger: silentLogger,
      batchSize: 5,
    }).on(
      'order.created',
      async (_p, { tx, envelope }) => void (await effects.insert(tx, envelope.id, 'billing', 'x')),
    );
    const ids: string[] = [];
    const publish = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const m = wire({ type: 'order.created', payload: { i } });
        ids.push(m.id);
        await transport.publish({ topic: 'order.created', message: m });
      }
    };
    try {
      await consumer.start();
      await publish(20);
      await waitFor(
        'first messages handled',
        async () => (await transport.committedOffset('billing', 'order.created')) >= 20,
      );

      await stopPostgres();
      await publish(30);
      const before = transactions;
      const offsetWhileDown = await transport.committedOffset('billing', 'order.created');
      await new Promise((r) => setTimeout(r, 3_000)); // an outage lasts a while; measure what happens during it
      expect(await transport.committedOffset('billing', 'order.created')).toBe(offsetWhileDown); // nothing acked
      expect(transactions - before).toBeLessThan(15); // backoff, not a busy loop

      await startPostgres();
      await waitFor(
        'everything handled after recovery',
        async () => (await transport.committedOffset('billing', 'order.created')) >= 50,
        60_000,
      );
      const rows = await effects.rows();
      expect(rows).toHaveLength(50);
      expect(new Set(rows.map((r) => r.message_id))).toEqual(new Set(ids));
    } finally {
      await consumer.stop();
      await transport.close();
      rmSync(dir, { recursive: true, force: true });
      await f.teardown();
    }
  });
});
