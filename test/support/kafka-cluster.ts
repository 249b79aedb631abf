import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

interface KafkaScripts {
  startKafkaNode(options: {
    nodeId: number;
    port: number;
    controllerPort: number;
    voters: string;
    dataDir: string;
    clusterId: string;
    replication: number;
    heapMb: number;
  }): Promise<number>;
  probeKafka(host: string, port: number): Promise<'up' | 'down'>;
}

// The service script is plain JavaScript outside the TypeScript project: loaded by path, typed here.
const scripts = () =>
  import(fileURLToPath(new URL('../../scripts/services/kafka.mjs', import.meta.url))) as Promise<KafkaScripts>;

export interface KafkaClusterNode {
  readonly nodeId: number;
  readonly port: number;
  readonly controllerPort: number;
  /** `127.0.0.1:<port>` */
  readonly address: string;
}

type NodeStart = Parameters<KafkaScripts['startKafkaNode']>[0];

/**
 * A KRaft cluster of its own (each node broker and controller; 3 nodes by default, or 1), beside
 * the shared broker: own ports, data under a temp folder, a cluster id of its own, the internal
 * topics replicated on every node. `kill(node)` SIGKILLs one node, `restart(node)` starts it again
 * on its data; `stop()` kills every node and removes the data.
 */
export class KafkaCluster {
  private readonly pids = new Map<number, number>();
  private readonly onExit = () => this.killAll();

  private constructor(
    private readonly dir: string,
    readonly nodes: readonly KafkaClusterNode[],
    private readonly starts: ReadonlyMap<number, NodeStart>,
  ) {
    process.once('exit', this.onExit);
  }

  static async start(size = 3, heapMb = 384): Promise<KafkaCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'surety-kafka-cluster-'));
    const ports = await freePorts(size * 2);
    const nodes = Array.from({ length: size }, (_, i) => ({
      nodeId: i + 1,
      port: ports[i]!,
      controllerPort: ports[size + i]!,
      address: `127.0.0.1:${ports[i]!}`,
    }));
    const voters = nodes.map((n) => `${n.nodeId}@127.0.0.1:${n.controllerPort}`).join(',');
    const starts = new Map(
      nodes.map((node) => [
        node.nodeId,
        {
          nodeId: node.nodeId,
          port: node.port,
          controllerPort: node.controllerPort,
          voters,
          dataDir: join(dir, `node-${node.nodeId}`),
          clusterId: `surety-cl-${dir.slice(-6)}`,
          replication: size,
          heapMb,
        },
      ]),
    );
    const cluster = new KafkaCluster(dir, nodes, starts);
    try {
      for (const node of nodes) await cluster.restart(node.nodeId, false);
      await cluster.awaitNodes(nodes);
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** Starts a node (again, on its data) and, unless told not to, waits until it answers. */
  async restart(nodeId: number, wait = true): Promise<void> {
    const { startKafkaNode } = await scripts();
    this.pids.set(nodeId, await startKafkaNode(this.starts.get(nodeId)!));
    if (wait) await this.awaitNodes(this.nodes.filter((n) => n.nodeId === nodeId));
  }

  private async awaitNodes(nodes: readonly KafkaClusterNode[]): Promise<void> {
    const { probeKafka } = await scripts();
    await waitFor(
      'the Kafka nodes to answer',
      async () => (await Promise.all(nodes.map((n) => probeKafka('127.0.0.1', n.port)))).every((s) => s === 'up'),
      150_000,
      500,
    );
  }

  get addresses(): string[] {
    return this.nodes.map((n) => n.address);
  }

  /** SIGKILLs one node, as a crashed machine. */
  kill(nodeId: number): void {
    const pid = this.pids.get(nodeId);
    if (pid === undefined) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    this.pids.delete(nodeId);
  }

  async stop(): Promise<void> {
    this.killAll();
    process.removeListener('exit', this.onExit);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private killAll(): void {
    for (const nodeId of [...this.pids.keys()]) this.kill(nodeId);
  }
}

/** Free loopback ports below 32768 (outside Linux's ephemeral range, so no client takes them meanwhile). */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (ports.includes(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) ports.push(port);
  }
  return ports;
}
