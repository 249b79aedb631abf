/**
 * A rebalance during consumption: a second member joins the group, then the first leaves, while
 * messages flow. Partitions move twice; no effect may happen twice and none may be lost.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Consumer } from '../../src/consumer/consumer.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Transport } from '../../src/ports/transport.js';
import kafka from '../support/brokers/kafka.js';
import { wire } from '../support/consumer-env.js';
import { uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { makePostgresFixture } from '../stores/fixtures.js';

const TOPIC = 'kafka.item';
const GROUP = 'rebalance';

describe('kafka: a rebalance during consumption', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let ns: string;
  const transports: Transport[] = [];
  const consumers: Consumer[] = [];

  beforeEach(async () => {
    f = await makePostgresFixture('kafka_rebalance');
    ns = uniqueName('kafka_rebalance');
    await f.pool.query(`CREATE TABLE "${f.schema}".effects (n int NOT NULL, member text NOT NULL)`);
    await kafka.prepare(ns, TOPIC, GROUP);
  });

  afterEach(async () => {
    await Promise.allSettled(consumers.map((c) => c.stop()));
    await Promise.allSettled(transports.map((t) => t.close()));
    await kafka.cleanup(ns);
    await f.teardown();
  });

  async function member(name: string): Promise<Consumer> {
    const transport = await kafka.open(ns);
    transports.push(transport);
    const consumer = new Consumer({ group: GROUP, store: f.store, transport, logger: silentLogger }).on(
      TOPIC,
      async (item: { n: number }, { tx }) => {
        await tx.query(`INSERT INTO "${f.schema}".effects (n, member) VALUES ($1, $2)`, [item.n, name]);
        // A little work per message, so that consumption spans the rebalances.
        await new Promise((resolve) => setTimeout(resolve, 5));
      },
    );
    consumers.push(consumer);
    await consumer.start();
    return consumer;
  }

  let next = 0;
  async function publish(publisher: Transport, count: number): Promise<void> {
    const first = next;
    next += count;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        publisher.publish({
          topic: TOPIC,
          message: wire({ type: TOPIC, key: `item-${first + i}`, payload: { n: first + i } }),
        }),
      ),
    );
  }

  const effects = async () =>
    (
      await f.pool.query<{ member: string; total: number; distinct: number }>(
        `SELECT member, count(*)::int AS total, count(DISTINCT n)::int AS distinct FROM "${f.schema}".effects GROUP BY ROLLUP (member) ORDER BY member NULLS LAST`,
      )
    ).rows;
  const all = async () => (await effects()).at(-1) ?? { member: null, total: 0, distinct: 0 };
  const of = async (name: string) => (await effects()).find((r) => r.member === name)?.total ?? 0;

  it('a member joining and then one leaving: every message has one effect', async () => {
    const publisher = await kafka.open(ns);
    transports.push(publisher);
    const first = await member('first');
    await publish(publisher, 300);
    await waitFor('the first member to be under way', async () => (await all()).total >= 100, 30_000);

    await member('second'); // joins: the group rebalances while the first member has work in hand
    await publish(publisher, 300);
    await waitFor('the second member to get partitions', async () => (await of('second')) > 0, 30_000);

    await first.stop(); // leaves: its partitions move to the second member, mid-stream
    await publish(publisher, 300);
    await waitFor('all 900 messages', async () => (await all()).distinct === 900, 60_000);

    const total = await all();
    expect({ total: total.total, distinct: total.distinct }).toEqual({ total: 900, distinct: 900 });
    expect(await of('first')).toBeGreaterThan(0);
    expect(await of('second')).toBeGreaterThan(0);
  });
});
