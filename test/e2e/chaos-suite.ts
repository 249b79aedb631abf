/**
 * The whole path on one broker, under faults: outbox (this process) -> relay (its own process) ->
 * broker -> consumer with its inbox and replay job (its own process) -> dead letters -> replay. While
 * 2,000 messages flow, the relay and the consumer are SIGKILLed at random moments and started
 * again, and the broker cuts their connections. Every committed message must have exactly one
 * effect at the end; a fiftieth of them fail until a "fix" is deployed, so they go through the
 * dead-letter table and come back by replay.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/producer/outbox.js';
import type { BrokerUnderTest } from '../support/brokers/broker-under-test.js';
import { ChaosChild } from '../support/chaos/child.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { makePostgresFixture } from '../stores/fixtures.js';

const MESSAGES = 2_000;
const PER_TRANSACTION = 20;
const GROUP = 'chaos';
const TOPIC = 'chaos.item';

type Fault = 'kill relay' | 'kill consumer' | 'cut connections';

/** Three of each fault, in a random order: each kind happens, and the order differs run to run. */
function faultPlan(): Fault[] {
  const plan: Fault[] = [];
  for (let i = 0; i < 3; i++) plan.push('kill relay', 'kill consumer', 'cut connections');
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [plan[i], plan[j]] = [plan[j]!, plan[i]!];
  }
  return plan;
}

const pause = (minMs: number, maxMs: number) =>
  new Promise((resolve) => setTimeout(resolve, minMs + Math.random() * (maxMs - minMs)));

export function runChaosEndToEnd(broker: BrokerUnderTest): void {
  describe(`end to end under faults: PostgreSQL -> ${broker.name}`, () => {
    let f: Awaited<ReturnType<typeof makePostgresFixture>>;
    let ns: string;
    let relay: ChaosChild;
    let consumer: ChaosChild;

    beforeEach(async () => {
      f = await makePostgresFixture('chaos');
      ns = uniqueName(`chaos_${broker.name}`);
      await f.pool.query(`CREATE TABLE "${f.schema}".effects (n int NOT NULL, message_id uuid NOT NULL)`);
      await f.pool.query(`CREATE TABLE "${f.schema}".fixed (at timestamptz NOT NULL DEFAULT now())`);
      await broker.prepare(ns, TOPIC, GROUP);
      const env = {
        SURETY_BROKER: broker.name,
        SURETY_NS: ns,
        SURETY_GROUP: GROUP,
        SURETY_PG_URL: testEnv.postgresUrl,
        SURETY_PG_SCHEMA: f.schema,
      };
      relay = new ChaosChild('relay-child.ts', env);
      consumer = new ChaosChild('consumer-child.ts', env);
    });

    afterEach(async () => {
      await Promise.all([relay.stop(), consumer.stop()]);
      await broker.cleanup(ns);
      await f.teardown();
    });

    it('gives each of 2,000 committed messages exactly one effect while the relay and consumer are killed and connections cut', async () => {
      await Promise.all([relay.start(), consumer.start()]);
      const outbox = new Outbox({ store: f.store });

      let produced = 0;
      const producing = (async () => {
        for (let first = 0; first < MESSAGES; first += PER_TRANSACTION) {
          await outbox.transaction(async (tx) => {
            for (let n = first; n < first + PER_TRANSACTION; n++)
              await outbox.add(tx, { type: TOPIC, key: `item-${n}`, payload: { n, flaky: n % 50 === 0 } });
          });
          produced += PER_TRANSACTION;
          await pause(20, 60);
        }
      })();

      const done: string[] = [];
      for (const fault of faultPlan()) {
        await pause(300, 900);
        done.push(`${fault} at ${produced} produced`);
        if (fault === 'kill relay') {
          await relay.kill();
          await relay.start();
        } else if (fault === 'kill consumer') {
          await consumer.kill();
          await consumer.start();
        } else {
          await broker.cutConnections(ns);
        }
      }
      await producing;

      const effects = async () =>
        (
          await f.pool.query<{ total: number; distinct: number }>(
            `SELECT count(*)::int AS total, count(DISTINCT n)::int AS distinct FROM "${f.schema}".effects`,
          )
        ).rows[0]!;
      // Flaky messages (keys item-n, n a multiple of 50) with a dead letter.
      const deadLettered = async () =>
        (
          await f.pool.query<{ n: number }>(
            `SELECT count(DISTINCT msg_key)::int AS n FROM "${f.schema}".surety_dead_letters
             WHERE split_part(msg_key, '-', 2)::int % 50 = 0`,
          )
        ).rows[0]!.n;
      // All but the flaky ones arrive, and each flaky one has failed into a dead letter (one whose delivery a
      // kill left unacked may come back only after the broker's ack wait); then the fix goes out and the
      // replay job brings them back.
      await waitFor(
        'every steady message handled, every flaky one dead-lettered',
        async () => (await effects()).distinct >= MESSAGES - MESSAGES / 50 && (await deadLettered()) >= MESSAGES / 50,
        120_000,
        200,
      );
      await f.pool.query(`INSERT INTO "${f.schema}".fixed DEFAULT VALUES`);
      await waitFor(
        'every message handled, the flaky ones by replay',
        async () => (await effects()).distinct === MESSAGES,
        120_000,
        200,
      );
      // Stopped cleanly, nothing in flight can add an effect after the count.
      await Promise.all([relay.stop(), consumer.stop()]);

      const final = await effects();
      expect({ faults: done.length, ...final }).toEqual({ faults: 9, total: MESSAGES, distinct: MESSAGES });
      const sent = await f.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${f.schema}".surety_outbox WHERE status <> 'sent'`,
      );
      expect(sent.rows[0]!.n).toBe(0);
      const replayed = await f.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${f.schema}".surety_dead_letters WHERE status = 'resolved'`,
      );
      expect(replayed.rows[0]!.n).toBeGreaterThanOrEqual(MESSAGES / 50);
      expect(relay.kills + consumer.kills).toBe(6);
    });
  });
}
