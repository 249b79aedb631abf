import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './wait.js';

const run = promisify(execFile);
/** Debian's rabbitmq-server scripts, run directly: the wrappers in /usr/sbin switch to the shared broker's user and cookie. */
const BIN = process.env.SURETY_TEST_RABBITMQ_BIN ?? '/usr/lib/rabbitmq/bin';

export interface ClusterNode {
  /** Erlang node name, e.g. `surety-k3x9-a@localhost`. */
  readonly name: string;
  readonly port: number;
  /** Erlang distribution port. */
  readonly distPort: number;
  /** `amqp://guest:guest@127.0.0.1:<port>` */
  readonly url: string;
}

/**
 * A RabbitMQ cluster of its own on this machine, beside the shared broker and never touching it:
 * nodes with their own names, AMQP and distribution ports, data and log folders under a temp
 * folder, an empty plugin list and config, and a cookie of their own, joined to the first node
 * with `stop_app`, `join_cluster`, `start_app`. `stop()` kills every node it started.
 */
export class RabbitCluster {
  private readonly processes = new Map<string, ChildProcess>();

  private constructor(
    private readonly dir: string,
    readonly nodes: readonly ClusterNode[],
  ) {}

  static async start(size = 3): Promise<RabbitCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'surety-cluster-'));
    writeFileSync(join(dir, '.erlang.cookie'), randomBytes(20).toString('hex').toUpperCase(), { mode: 0o400 });
    writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
    writeFileSync(join(dir, 'rabbitmq.conf'), ''); // not /etc/rabbitmq's, which binds the shared broker's port
    writeFileSync(join(dir, 'rabbitmq-env.conf'), ''); // nor the shared node's name
    const id = randomBytes(3).toString('hex');
    const ports = await freePorts(size * 2);
    const nodes = Array.from({ length: size }, (_, i) => {
      const port = ports[i]!;
      const name = `surety-${id}-${'abcdefghij'[i]}@localhost`;
      return { name, port, distPort: ports[size + i]!, url: `amqp://guest:guest@127.0.0.1:${port}` };
    });
    const cluster = new RabbitCluster(dir, nodes);
    try {
      for (const node of nodes) cluster.spawnNode(node);
      await Promise.all(nodes.map((node) => cluster.awaitNode(node)));
      const [first, ...others] = nodes;
      for (const node of others) {
        await cluster.ctl(node, 'stop_app');
        await cluster.ctl(node, 'join_cluster', first!.name);
        await cluster.ctl(node, 'start_app');
      }
      const status = JSON.parse(await cluster.ctl(first!, 'cluster_status', '--formatter', 'json')) as {
        running_nodes: string[];
      };
      if (status.running_nodes.length !== size)
        throw new Error(`cluster formed with ${status.running_nodes.join(', ')} only`);
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** Runs `rabbitmqctl -n <node>` with the cluster's cookie; resolves with its output. */
  async ctl(node: ClusterNode, ...args: string[]): Promise<string> {
    const { stdout } = await run(join(BIN, 'rabbitmqctl'), ['-n', node.name, ...args], {
      env: this.env(),
      cwd: this.dir,
      timeout: 120_000,
    });
    return stdout;
  }

  /** Kills the node's Erlang VM with SIGKILL (its connections drop, its port refuses); resolves once it is gone. */
  async kill(node: ClusterNode): Promise<void> {
    const child = this.processes.get(node.name);
    if (child?.pid === undefined) return;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
    await exited;
  }

  /** Starts a killed node again on its data: it rejoins the cluster. */
  async restart(node: ClusterNode): Promise<void> {
    const child = this.processes.get(node.name);
    if (child && child.exitCode === null && child.signalCode === null) throw new Error(`${node.name} is running`);
    this.spawnNode(node);
    await this.awaitNode(node);
  }

  /** Stops (SIGSTOP) or resumes (SIGCONT) the node's VM: a hung node accepts TCP and answers nothing. */
  freeze(node: ClusterNode, frozen: boolean): void {
    const pid = this.processes.get(node.name)?.pid;
    if (pid !== undefined) process.kill(-pid, frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Kills every node (also after a failed start) and removes the folder. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.kill(node)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private env(node?: ClusterNode): NodeJS.ProcessEnv {
    const base = {
      ...process.env,
      HOME: this.dir, // where Erlang reads the cookie
      RABBITMQ_CONF_ENV_FILE: join(this.dir, 'rabbitmq-env.conf'),
      ERL_EPMD_ADDRESS: '127.0.0.1',
    };
    if (!node) return base;
    const data = this.dataDir(node);
    return {
      ...base,
      RABBITMQ_NODENAME: node.name,
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: String(node.port),
      RABBITMQ_DIST_PORT: String(node.distPort),
      RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
      RABBITMQ_MNESIA_BASE: join(data, 'mnesia'),
      RABBITMQ_LOG_BASE: join(data, 'log'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(this.dir, 'enabled_plugins'),
      RABBITMQ_CONFIG_FILE: join(this.dir, 'rabbitmq.conf'),
    };
  }

  private dataDir(node: ClusterNode): string {
    return join(this.dir, node.name.replace(/@.*/, ''));
  }

  private spawnNode(node: ClusterNode): void {
    mkdirSync(this.dataDir(node), { recursive: true });
    const env = this.env(node);
    const out = openSync(join(this.dir, `${node.name}.out`), 'a');
    // Its own process group, so that kill() reaches the VM and its helpers, not only the start script;
    // the temp folder as working directory, where a crash dump would land.
    const child = spawn(join(BIN, 'rabbitmq-server'), [], {
      env,
      detached: true,
      stdio: ['ignore', out, out],
      cwd: this.dir,
    });
    closeSync(out);
    child.on('error', () => undefined); // reported by awaitNode through the exit
    this.processes.set(node.name, child);
    leftBehind.add(child);
    child.once('exit', () => leftBehind.delete(child));
  }

  /** Polls the AMQP port (cheap), then confirms with `await_startup`; fails at once if the node exits. */
  private async awaitNode(node: ClusterNode): Promise<void> {
    const child = this.processes.get(node.name)!;
    await waitFor(
      `${node.name} to listen on ${node.port}`,
      () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`${node.name} exited during start-up:\n${this.output(node).slice(-2_000)}`);
        return accepts(node.port);
      },
      150_000,
      200,
    );
    await this.ctl(node, 'await_startup', '--timeout', '120');
  }

  private output(node: ClusterNode): string {
    try {
      return readFileSync(join(this.dir, `${node.name}.out`), 'utf8');
    } catch {
      return '';
    }
  }
}

/**
 * Nodes run in process groups of their own, so that nothing reaches them when this process ends
 * without calling stop() (an interrupted run): kill them then too.
 */
const leftBehind = new Set<ChildProcess>();
function killLeftBehind(): void {
  for (const child of leftBehind) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}
process.once('exit', killLeftBehind);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killLeftBehind();
    // Without other listeners, end as the signal would have: this one is gone now.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Distinct free ports below Linux's ephemeral range (32768 and up), where an outgoing connection
 * cannot take one between this check and the node binding it; never the shared broker's 5672/25672.
 */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (port === 25_672 || ports.has(port)) continue;
    if (await bindable(port)) ports.add(port);
  }
  return [...ports];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
