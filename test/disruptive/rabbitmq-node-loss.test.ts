/**
 * Starts a 3-node RabbitMQ cluster of its own (never the shared broker) and kills its nodes: heavy
 * on two cores, so it runs alone (vitest.disruptive.config.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Consumer } from '../../src/consumer/consumer.js';
import type { ConsumerStore } from '../../src/ports/store.js';
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
const REPLACED = 'rabbitmq nacked every publish on a new channel; replacing it';

/** When `lines` last logged a connection, and to which node. */
function lastConnected(lines: readonly LogLine[]): { node: unknown; at: number } | undefined {
  const line = lines.filter((l) => l.msg === 'rabbitmq connected').at(-1);
  return line && { node: line.obj.node, at: line.at };
}

/**
 * A relay (PostgreSQL outbox) and an exactly-once consumer (PostgreSQL inbox), each on a transport
 * of its own given every node in `order` (the first is where both connect), with a producer
 * committing a steady stream of messages. `disrupt` runs once messages flow; the flow must then
 * resume, every row end sent, and every message have exactly one effect.
 */
async function withFlow(
  cluster: RabbitCluster,
  order: readonly ClusterNode[],
  disrupt: (flow: { resumed(): Promise<boolean>; markCommitted(): void }) => Promise<void>,
): Promise<{ relayLog: LogLine[]; consumerLog: LogLine[] }> {
  const f = await makePostgresFixture('cluster');
  const effects = await effectsTable(f);
  const exchange = uniqueName('cluster');
  const group = uniqueName('cluster_g');
  const relayLog = recordingLogger();
  const consumerLog = recordingLogger();
  const common = {
    url: order.map((n) => n.url),
    nodeOrder: 'listed' as const, // the first node, so that both are on the node the test disrupts
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

    const first = order[0]!;
    const queues = JSON.parse(
      await cluster.ctl(first, 'list_queues', 'name', 'type', 'members', 'leader', '--formatter', 'json'),
    ) as { name: string; type: string; members: string[]; leader: string }[];
    const declared = queues.find((q) => q.name === group);
    expect(declared?.type).toBe('quorum');
    expect([...(declared?.members ?? [])].sort()).toEqual(cluster.nodes.map((n) => n.name).sort());
    expect(declared?.leader).toBe(first.name); // declared through it: the disruption hits the leader
    // Both connections are on the first node, as the broker itself reports.
    const connections = JSON.parse(await cluster.ctl(first, 'list_connections', 'port', '--formatter', 'json'));
    expect(connections).toEqual([{ port: first.port }, { port: first.port }]);
    expect(lastConnected(relayLog.lines)?.node).toBe(masked(first));
    expect(lastConnected(consumerLog.lines)?.node).toBe(masked(first));

    consumer = new Consumer({
      group,
      store: f.store as unknown as ConsumerStore,
      transport: consumerTransport,
      logger: consumerLog.logger,
    }).on('order.created', async (_p, { tx, envelope }) => void (await effects.insert(tx, envelope.id, group, 'x')));
    await consumer.start();
    const outbox = new Outbox({ store: f.store });
    relay = new OutboxRelay({
      store: f.store,
      publisher: relayTransport,
      outbox,
      logger: relayLog.logger,
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

    let committedBefore = ids.length;
    await disrupt({
      markCommitted: () => void (committedBefore = ids.length),
      // A message committed after the mark went through the relay, the broker and the consumer.
      async resumed() {
        const handled = new Set((await effects.rows()).map((r) => r.message_id));
        return ids.slice(committedBefore).some((id) => handled.has(id));
      },
    });

    const total = ids.length + 200;
    await waitFor('200 more messages committed', () => ids.length >= total, 60_000, 50);
    producing = false;
    await producer;
    await waitFor('every row sent', async () => (await f.store.outbox.stats()).sent === ids.length, 120_000, 100);
    await waitFor('every message handled', async () => (await effectCount()) >= ids.length, 120_000, 100);
    expect(await f.store.outbox.stats()).toMatchObject({ sent: ids.length, pending: 0, dead: 0 });
    const rows = await effects.rows();
    expect(rows).toHaveLength(ids.length); // exactly one effect each: no message twice, none lost
    expect(new Set(rows.map((r) => r.message_id))).toEqual(new Set(ids));
    return { relayLog: relayLog.lines, consumerLog: consumerLog.lines };
  } catch (err) {
    const show = (name: string, lines: readonly LogLine[]) =>
      lines
        .filter((l) => l.level !== 'debug')
        .map((l) => `${name} ${new Date(l.at).toISOString()} ${l.level} ${l.msg} ${JSON.stringify(l.obj)}`);
    console.error([...show('relay', relayLog.lines), ...show('consumer', consumerLog.lines)].slice(0, 400).join('\n'));
    throw err;
  } finally {
    producing = false;
    await producer?.catch(() => undefined);
    await relay?.stop();
    await consumer?.stop();
    for (const t of transports) await t.close();
    await f.teardown();
  }
}

describe('RabbitMQ cluster nodes lost while messages flow', () => {
  let cluster: RabbitCluster | undefined;

  beforeAll(async () => {
    const started = Date.now();
    cluster = await RabbitCluster.start(3);
    console.info(`3-node RabbitMQ cluster up in ${Date.now() - started} ms`);
  }, 400_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('node A killed: relay and consumer resume through another node within seconds; one effect per message', async () => {
    const [a, b, c] = cluster!.nodes as [ClusterNode, ClusterNode, ClusterNode];
    let killedAt = 0;
    let resumedMs = 0;
    const { relayLog, consumerLog } = await withFlow(cluster!, [a, b, c], async (flow) => {
      killedAt = Date.now();
      flow.markCommitted();
      await cluster!.kill(a);
      await waitFor('a message committed after the kill to be handled', () => flow.resumed(), 60_000, 50);
      resumedMs = Date.now() - killedAt;
    });
    const relayNode = lastConnected(relayLog)!;
    const consumerNode = lastConnected(consumerLog)!;
    console.info(
      `node A killed: relay reconnected in ${relayNode.at - killedAt} ms, consumer in ${consumerNode.at - killedAt} ms; ` +
        `a message committed after the kill was handled ${resumedMs} ms after it; ` +
        `publisher channel replaced ${relayLog.filter((l) => l.msg === REPLACED).length} times`,
    );
    for (const reconnected of [relayNode, consumerNode]) {
      expect([masked(b), masked(c)]).toContain(reconnected.node);
      expect(reconnected.at).toBeGreaterThan(killedAt);
    }
    expect(resumedMs).toBeLessThan(15_000);
  });

  it('the leader killed while another node hangs: the publisher replaces the channel RabbitMQ wedged', async () => {
    const [a, b, c] = cluster!.nodes as [ClusterNode, ClusterNode, ClusterNode];
    const restarted = Date.now();
    await cluster!.restart(a);
    console.info(`node A restarted and rejoined in ${Date.now() - restarted} ms`);
    let thawedAt = 0;
    let resumedMs = 0;
    // Both on B, the queue's leader. With C hung when B dies, A alone has no majority: the queue
    // nacks, and a channel that first publishes to it then keeps nacking after C is back (3.10).
    const { relayLog } = await withFlow(cluster!, [b, a, c], async (flow) => {
      cluster!.freeze(c, true);
      try {
        await cluster!.kill(b);
        await new Promise((resolve) => setTimeout(resolve, 3_000)); // an outage of the majority lasts a while
      } finally {
        cluster!.freeze(c, false);
      }
      thawedAt = Date.now();
      flow.markCommitted();
      await waitFor('a message committed after C came back to be handled', () => flow.resumed(), 60_000, 50);
      resumedMs = Date.now() - thawedAt;
    });
    const replaced = relayLog.filter((l) => l.msg === REPLACED);
    console.info(
      `node B killed with C hung for 3 s: publisher channel replaced ${replaced.length} times; ` +
        `a message committed after C came back was handled ${resumedMs} ms after it`,
    );
    expect(lastConnected(relayLog)?.node).toBe(masked(a));
    expect(resumedMs).toBeLessThan(15_000);
  });
});
