/**
 * Kafka crash cases of issue 17, each a real SIGKILL of a child process: a relay killed while its
 * records sit in the client's buffer, and a consumer killed between its database commit and its
 * offset commit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeEnvelope } from '../../src/core/wire.js';
import { Outbox } from '../../src/producer/outbox.js';
import kafka from '../support/brokers/kafka.js';
import { ChaosChild } from '../support/chaos/child.js';
import { testEnv, uniqueName } from '../support/env.js';
import { createKafkaQueueProbe } from '../../src/transports/kafka/index.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';
import { makePostgresFixture } from '../stores/fixtures.js';

const TOPIC = 'kafka.item';
const GROUP = 'crash';
// ChaosChild starts scripts of test/support/chaos/; these live with the Kafka tests.
const fixture = (name: string) => `../../transports/fixtures/${name}`;

describe('kafka: crashes between the broker and the database', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let ns: string;
  let env: Record<string, string>;
  const children: ChaosChild[] = [];

  beforeEach(async () => {
    f = await makePostgresFixture('kafka_crash');
    ns = uniqueName('kafka_crash');
    await f.pool.query(
      `CREATE TABLE "${f.schema}".effects (n int NOT NULL, message_id uuid NOT NULL, pid int NOT NULL)`,
    );
    await kafka.prepare(ns, TOPIC, GROUP);
    env = { SURETY_NS: ns, SURETY_GROUP: GROUP, SURETY_PG_URL: f.childEnv.SURETY_PG_URL!, SURETY_PG_SCHEMA: f.schema };
  });

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.stop()));
    await kafka.cleanup(ns);
    await f.teardown();
  });

  const child = (script: string, extra: Record<string, string> = {}) => {
    const c = new ChaosChild(fixture(script), { ...env, ...extra });
    children.push(c);
    return c;
  };

  /** Runs `script` until it SIGKILLs itself at its `after`-th publish or ack. */
  const crash = (script: string, after: number) =>
    exited(spawnTs(`transports/fixtures/${script}`, { ...env, SURETY_CRASH_AFTER: String(after) }));

  /** The consumer group's lag on the topic, from the Kafka probe. */
  async function lag(): Promise<number> {
    const probe = await createKafkaQueueProbe({ brokers: testEnv.kafkaBrokers });
    try {
      return (await probe.inspect(`${ns}.${TOPIC}@${ns}.${GROUP}`)).ready;
    } finally {
      await probe.close();
    }
  }

  async function produce(count: number): Promise<void> {
    const outbox = new Outbox({ store: f.store });
    await outbox.transaction(async (tx) => {
      for (let n = 0; n < count; n++) await outbox.add(tx, { type: TOPIC, key: `item-${n}`, payload: { n } });
    });
  }

  const statuses = async () =>
    (
      await f.pool.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM "${f.schema}".surety_outbox GROUP BY status ORDER BY status`,
      )
    ).rows;

  /** Every id on the topic, read by a group of this test's own from the start. */
  async function idsOnTopic(expected: number): Promise<Set<string>> {
    const transport = await kafka.open(ns);
    const ids = new Set<string>();
    const sub = await transport.subscribe({ group: 'reader', topics: [TOPIC] }, async (d) => {
      ids.add(decodeEnvelope(d.message).id);
      await d.ack();
    });
    try {
      await waitFor(`${expected} ids on the topic`, () => ids.size >= expected, 30_000);
      return ids;
    } finally {
      await sub.close();
      await transport.close();
    }
  }

  it('a relay SIGKILLed after send() and before the acknowledgement marks none sent; all are published after restart', async () => {
    await produce(60);
    const crashed = await crash('kafka-relay.ts', 40);
    expect(crashed.signal).toBe('SIGKILL');
    // 40 publishes were in the transport's hands, none acknowledged: the relay marked nothing sent.
    expect(await statuses()).toEqual([{ status: 'pending', n: 60 }]);

    await child('kafka-relay.ts').start();
    await waitFor('every row marked sent', async () => (await statuses()).every((s) => s.status === 'sent'), 30_000);
    const { rows } = await f.pool.query<{ id: string }>(`SELECT message_id AS id FROM "${f.schema}".surety_outbox`);
    const onTopic = await idsOnTopic(60);
    expect(rows.filter((r) => !onTopic.has(r.id))).toEqual([]);
  });

  it('a consumer SIGKILLed between its database commit and its offset commit has each effect once', async () => {
    await produce(50);
    await child('kafka-relay.ts').start();
    const effects = async () =>
      (
        await f.pool.query<{ total: number; distinct: number; pids: number }>(
          `SELECT count(*)::int AS total, count(DISTINCT n)::int AS distinct, count(DISTINCT pid)::int AS pids FROM "${f.schema}".effects`,
        )
      ).rows[0]!;
    // It died at its 20th ack: 20 effects committed, no offset past the first of them committed.
    expect((await crash('kafka-consumer.ts', 20)).signal).toBe('SIGKILL');
    const before = await effects();
    const lagAtCrash = await lag();

    await child('kafka-consumer.ts').start();
    await waitFor('all 50 effects', async () => (await effects()).distinct === 50, 60_000);
    await waitFor('the group to commit everything', async () => (await lag()) === 0, 30_000);
    const after = await effects();
    expect({ total: after.total, distinct: after.distinct }).toEqual({ total: 50, distinct: 50 });
    expect(before.total).toBeGreaterThanOrEqual(20);
    // The offsets of those effects were not committed: the second consumer got them again.
    expect(lagAtCrash).toBeGreaterThan(50 - before.total);
    // The redelivered ones were skipped by the inbox: the group's inbox holds each message once.
    const inbox = await f.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${f.schema}".surety_inbox`);
    expect(inbox.rows[0]!.n).toBe(50);
  });
});
