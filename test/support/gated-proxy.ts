import net from 'node:net';
import { testEnv } from './env.js';

interface Pipe {
  readonly hold: { up: boolean; down: boolean };
  release(): void;
  cut(): void;
}

/**
 * A loopback TCP proxy in front of RabbitMQ that can hold back either direction of the connections
 * open now, to make "the broker has not answered yet" deterministic, or cut them abruptly. Made with
 * `reserve()`, its port refuses connections (as a broker that is not up yet) until `listen()`.
 */
export class GatedProxy {
  private readonly pipes = new Set<Pipe>();

  private constructor(
    private readonly server: net.Server,
    private port: number,
  ) {}

  /** A proxy that forwards from now on. */
  static async start(): Promise<GatedProxy> {
    const proxy = await GatedProxy.reserve();
    await proxy.listen();
    return proxy;
  }

  /** A proxy whose port refuses connections until `listen()`. */
  static async reserve(): Promise<GatedProxy> {
    const target = new URL(testEnv.amqpUrl);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new GatedProxy(server, (server.address() as net.AddressInfo).port);
    await new Promise((resolve) => server.close(resolve));
    server.on('connection', (client) => proxy.pipe(client, target));
    return proxy;
  }

  /** Starts forwarding connections on the proxy's port. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  get url(): string {
    const target = new URL(testEnv.amqpUrl);
    target.host = `127.0.0.1:${this.port}`;
    return target.toString();
  }

  /** Holds the broker's frames (acks, returns, closes) to the client on the open connections. */
  holdBrokerToClient(): void {
    for (const p of this.pipes) p.hold.down = true;
  }

  /** Holds the client's frames (publishes) to the broker on the open connections. */
  holdClientToBroker(): void {
    for (const p of this.pipes) p.hold.up = true;
  }

  release(): void {
    for (const p of this.pipes) p.release();
  }

  /** Resets the open connections, as a crashed peer or a dropped network would. */
  cutAll(): void {
    for (const p of this.pipes) p.cut();
  }

  async close(): Promise<void> {
    this.cutAll();
    if (this.server.listening) await new Promise((resolve) => this.server.close(resolve));
  }

  private pipe(client: net.Socket, target: URL): void {
    const broker = net.connect(Number(target.port || 5672), target.hostname);
    const hold = { up: false, down: false };
    const held = { up: [] as Buffer[], down: [] as Buffer[] };
    const pipe: Pipe = {
      hold,
      release() {
        hold.up = hold.down = false;
        for (const chunk of held.up.splice(0)) broker.write(chunk);
        for (const chunk of held.down.splice(0)) client.write(chunk);
      },
      cut() {
        client.resetAndDestroy();
        broker.destroy();
      },
    };
    this.pipes.add(pipe);
    client.on('data', (chunk) => (hold.up ? held.up.push(chunk) : broker.write(chunk)));
    broker.on('data', (chunk) => (hold.down ? held.down.push(chunk) : client.write(chunk)));
    const end = (): void => {
      this.pipes.delete(pipe);
      client.destroy();
      broker.destroy();
    };
    for (const socket of [client, broker]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  }
}
