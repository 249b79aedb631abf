/**
 * Starts a 3-node Kafka cluster of its own (never the shared broker) and SIGKILLs the leader of a
 * partition mid-run: heavy on two cores, so it runs alone (vitest.disruptive.config.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { decodeEnvelope } from '../../src/core/wire.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createKafkaTransport, type KafkaTransport } from '../../src/transports/kafka/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { uniqueName } from '../support/env.js';
import { KafkaCluster } from '../support/kafka-cluster.js';
import { waitFor } from '../support/wait.js';

const MESSAGES = 600;
const PER_TRANSACTION = 10;

describe('kafka: the partition leader killed mid-run on a 3-broker cluster', () => {
  let cluster: KafkaCluster;

  beforeAll(async () => {
    cluster = await KafkaCluster.start();
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('loses no acknowledged message, and the relay rides through', async () => {
    const f = await makePostgresFixture('kafka_leader');
    const topic = uniqueName('leader');
    const transports: KafkaTransport[] = [];
    const open = async () => {
      const transport = await createKafkaTransport({
        brokers: cluster.addresses,
        topology: { topics: [{ name: topic, partitions: 3, replicationFactor: 3, minInsyncReplicas: 2 }] },
        publishTimeoutMs: 5_000,
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 500,
        logger: silentLogger,
      });
      transports.push(transport);
      expect(await transport.waitUntilReady(60_000)).toBe(true);
      return transport;
    };
    try {
      const transport = await open();
      const outbox = new Outbox({ store: f.store });
      const relay = new OutboxRelay({
        store: f.store,
        publisher: transport,
        outbox,
        logger: silentLogger,
        pollIntervalMs: 100,
        backoff: { initialMs: 50, maxMs: 500 },
        maxAttempts: 1_000,
      });
      await relay.start();
      const sent = async () =>
        (
          await f.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM "${f.schema}".surety_outbox WHERE status = 'sent'`,
          )
        ).rows[0]!.n;

      let killed: number | undefined;
      for (let first = 0; first < MESSAGES; first += PER_TRANSACTION) {
        await outbox.transaction(async (tx) => {
          for (let n = first; n < first + PER_TRANSACTION; n++)
            await outbox.add(tx, { type: topic, key: `item-${n}`, payload: { n } });
        });
        if (first === MESSAGES / 3) {
          await waitFor('some rows sent before the kill', async () => (await sent()) > 0, 30_000);
          killed = await leaderOf(cluster, topic);
          cluster.kill(killed);
        }
      }
      await waitFor('every row sent after the leader died', async () => (await sent()) === MESSAGES, 120_000, 200);
      await relay.stop();
      expect(killed).toBeDefined();

      // Every row the relay marked sent was acknowledged by Kafka: read them all back from the survivors.
      const reader = await open();
      const ids = new Set<string>();
      await reader.subscribe({ group: uniqueName('reader'), topics: [topic] }, async (d) => {
        ids.add(decodeEnvelope(d.message).id);
        await d.ack();
      });
      const { rows } = await f.pool.query<{ id: string }>(`SELECT message_id AS id FROM "${f.schema}".surety_outbox`);
      await waitFor('every sent message on the topic', () => rows.every((r) => ids.has(r.id)), 60_000, 200);
      expect(rows).toHaveLength(MESSAGES);
    } finally {
      await Promise.allSettled(transports.map((t) => t.close()));
      await f.teardown();
    }
  });
});

/** The node leading partition 0 of `topic`, asked of the cluster. */
async function leaderOf(cluster: KafkaCluster, topic: string): Promise<number> {
  const { Admin } = await import('@platformatic/kafka');
  const admin = new Admin({ clientId: 'surety-test-leader', bootstrapBrokers: cluster.addresses });
  try {
    const meta = (await admin.metadata({ topics: [topic] })).topics.get(topic)!;
    return meta.partitions[0]!.leader;
  } finally {
    await admin.close();
  }
}
