/**
 * Starts a 3-node RabbitMQ cluster of its own (never the shared broker) and kills a node: heavy on
 * two cores, so it runs alone (vitest.disruptive.config.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/consumer-store.js';
import { Outbox } from '../../src/producer/outbox.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { createRabbitMqTransport, type RabbitMqTransport } from '../../src/transports/rabbitmq/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { effectsTable } from '../support/consumer-env.js';
import { uniqueName } from '../support/env.js';
import { RabbitCluster, type ClusterNode } from '../support/rabbit-cluster.js';
import { recordingLogger, type LogLine } from '../support/recording-logger.js';
import { waitFor } from '../support/wait.js';

const masked = (node: ClusterNode) => node.url.replace(':guest@', ':***@');

/** When `lines` last logged a connection, and to which node. */
function lastConnected(lines: readonly LogLine[]): { node: unknown; at: number } | undefined {
  const line = lines.filter((l) => l.msg === 'rabbitmq connected').at(-1);
  return line && { node: line.obj.node, at: line.at };
}

describe('a RabbitMQ cluster node killed while messages flow', () => {
  let cluster: RabbitCluster | undefined;

  beforeAll(async () => {
    const started = Date.now();
    cluster = await RabbitCluster.start(3);
    console.info(`3-node RabbitMQ cluster up in ${Date.now() - started} ms`);
  }, 400_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('relay and consumer resume through another node within seconds; every message has exactly one effect', async () => {
    const { nodes } = cluster!;
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const f = await makePostgresFixture('cluster');
    const effects = await effectsTable(f);
    const exchange = uniqueName('cluster');
    const group = uniqueName('cluster_g');
    const relayLog = recordingLogger();
    const consumerLog = recordingLogger();
    const common = {
      url: nodes.map((n) => n.url),
      nodeOrder: 'listed' as const, // node A first, so that both are on the node killed below
      exchange,
      reconnect: { initialMs: 100, maxMs: 1_000 },
    };
    const transports: RabbitMqTransport[] = [];
    let relay: OutboxRelay | undefined;
    let consumer: Consumer | undefined;
    let producing = true;
    let producer: Promise<void> | undefined;
    try {
      const consumerTransport = await createRabbitMqTransport({
        ...common,
        connectionName: `consumer-${group}`,
        // A quorum queue (the default type): replicated on every node of the cluster.
        topology: { queues: [{ name: group }], bindings: [{ exchange, queue: group, pattern: '#' }] },
        logger: consumerLog.logger,
      });
      transports.push(consumerTransport);
      expect(await consumerTransport.waitUntilReady(60_000)).toBe(true);
      const relayTransport = await createRabbitMqTransport({
        ...common,
        connectionName: `relay-${group}`,
        publishTimeoutMs: 3_000,
        logger: relayLog.logger,
      });
      transports.push(relayTransport);
      expect(await relayTransport.waitUntilReady(60_000)).toBe(true);

      const queues = JSON.parse(await cluster!.ctl(a, 'list_queues', 'name', 'type', 'members', '--formatter', 'json'));
      const declared = (queues as { name: string; type: string; members: string[] }[]).find((q) => q.name === group);
      expect(declared?.type).toBe('quorum');
      expect([...(declared?.members ?? [])].sort()).toEqual(nodes.map((n) => n.name).sort());
      // Both connections are on node A, as the broker itself reports.
      const connections = JSON.parse(await cluster!.ctl(a, 'list_connections', 'port', '--formatter', 'json'));
      expect(connections).toEqual([{ port: a.port }, { port: a.port }]);
      expect(lastConnected(relayLog.lines)?.node).toBe(masked(a));
      expect(lastConnected(consumerLog.lines)?.node).toBe(masked(a));

      consumer = new Consumer({
        group,
        store: f.store as unknown as ConsumerStore,
        transport: consumerTransport,
        logger: silentLogger,
      }).on('order.created', async (_p, { tx, envelope }) => void (await effects.insert(tx, envelope.id, group, 'x')));
      await consumer.start();
      const outbox = new Outbox({ store: f.store });
      relay = new OutboxRelay({
        store: f.store,
        publisher: relayTransport,
        outbox,
        logger: silentLogger,
        retention: false,
        pollIntervalMs: 50,
        backoff: { initialMs: 200, maxMs: 2_000 },
      });
      await relay.start();

      const ids: string[] = [];
      producer = (async () => {
        for (let i = 0; producing; i++) {
          const { messageId } = await outbox.transaction((tx) =>
            outbox.add(tx, { type: 'order.created', payload: { i } }),
          );
          ids.push(messageId);
          await new Promise((resolve) => setTimeout(resolve, 5)); // a steady stream, not a flood
        }
      })();
      const effectCount = async () => (await effects.rows()).length;
      await waitFor('messages to flow', async () => (await effectCount()) >= 100, 60_000, 50);

      const killedAt = Date.now();
      const committedBeforeKill = ids.length;
      await cluster!.kill(a);
      // Resumed: a message committed after the kill went through the relay, the broker and the consumer.
      const resumed = async () => {
        const handled = new Set((await effects.rows()).map((r) => r.message_id));
        return ids.slice(committedBeforeKill).some((id) => handled.has(id));
      };
      await waitFor('a message committed after the kill to be handled', resumed, 60_000, 50);
      const resumedMs = Date.now() - killedAt;
      const relayNode = lastConnected(relayLog.lines)!;
      const consumerNode = lastConnected(consumerLog.lines)!;
      console.info(
        `node A killed: relay reconnected in ${relayNode.at - killedAt} ms, consumer in ${consumerNode.at - killedAt} ms; ` +
          `a message committed after the kill was handled ${resumedMs} ms after it`,
      );
      for (const reconnected of [relayNode, consumerNode]) {
        expect([masked(b), masked(c)]).toContain(reconnected.node);
        expect(reconnected.at).toBeGreaterThan(killedAt);
      }
      expect(resumedMs).toBeLessThan(15_000);

      const total = ids.length + 200;
      await waitFor('200 more messages committed', () => ids.length >= total, 60_000, 50);
      producing = false;
      await producer;
      await waitFor('every row sent', async () => (await f.store.stats()).sent === ids.length, 120_000, 100);
      await waitFor('every message handled', async () => (await effectCount()) >= ids.length, 120_000, 100);
      const stats = await f.store.stats();
      expect(stats).toMatchObject({ sent: ids.length, pending: 0, dead: 0 });
      const rows = await effects.rows();
      expect(rows).toHaveLength(ids.length); // exactly one effect each: no message twice, none lost
      expect(new Set(rows.map((r) => r.message_id))).toEqual(new Set(ids));
    } finally {
      producing = false;
      await producer?.catch(() => undefined);
      await relay?.stop();
      await consumer?.stop();
      for (const t of transports) await t.close();
      await f.teardown();
    }
  });
});
