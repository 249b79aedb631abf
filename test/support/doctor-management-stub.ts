import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One queue as RabbitMQ's management API describes it (`GET /api/queues/{vhost}/{name}`). */
export interface StubQueue {
  readonly vhost?: string;
  readonly name: string;
  readonly durable: boolean;
  readonly type: 'classic' | 'quorum' | 'stream';
  readonly arguments: Record<string, unknown>;
  readonly messages_ready: number;
  readonly messages_unacknowledged: number;
  readonly consumers: number;
  /** Default false. */
  readonly exclusive?: boolean;
  readonly effective_policy_definition?: Record<string, unknown>;
}

/**
 * A small local HTTP server speaking the management API's JSON for queues, with basic auth, for
 * the code path this machine's broker (no management plugin) cannot exercise: one queue
 * (`/api/queues/{vhost}/{name}`), a vhost's list (`/api/queues/{vhost}`, honouring `columns`) and,
 * once `serverVersion` is set, the overview (`/api/overview`). Records requests.
 */
export class ManagementStub {
  readonly requests: { path: string; authorization: string | undefined }[] = [];
  private readonly queues = new Map<string, StubQueue>();
  /** The `rabbitmq_version` the overview reports; without it the overview is a 404. */
  serverVersion: string | undefined;

  private constructor(
    private readonly server: Server,
    readonly user: string,
    readonly password: string,
  ) {}

  static async start(user = 'monitor', password = 'pw'): Promise<ManagementStub> {
    const holder: { stub?: ManagementStub } = {};
    const server = createServer((req, res) => holder.stub!.handle(req.url ?? '/', req.headers.authorization, res));
    const stub = new ManagementStub(server, user, password);
    holder.stub = stub;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return stub;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  put(queue: StubQueue): void {
    this.queues.set(`${queue.vhost ?? '/'}\u0000${queue.name}`, queue);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(url: string, authorization: string | undefined, res: import('node:http').ServerResponse): void {
    this.requests.push({ path: url, authorization });
    const expected = `Basic ${Buffer.from(`${this.user}:${this.password}`).toString('base64')}`;
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (authorization !== expected) return json(401, { error: 'not_authorised', reason: 'Login failed' });
    const notFound = () => json(404, { error: 'Object Not Found', reason: 'Not Found' });
    const { pathname, searchParams } = new URL(url, 'http://stub');
    if (pathname === '/api/overview')
      return this.serverVersion ? json(200, { rabbitmq_version: this.serverVersion }) : notFound();
    const list = /^\/api\/queues\/([^/]+)$/.exec(pathname);
    if (list) {
      const vhost = decodeURIComponent(list[1]!);
      const columns = searchParams.get('columns')?.split(',');
      const rows = [...this.queues.values()]
        .filter((q) => (q.vhost ?? '/') === vhost)
        .map((q) => this.describe(q))
        .map((q) => (columns ? Object.fromEntries(columns.map((c) => [c, q[c as keyof typeof q]])) : q));
      return json(200, rows);
    }
    const one = /^\/api\/queues\/([^/]+)\/([^/]+)$/.exec(pathname);
    if (!one) return notFound();
    const queue = this.queues.get(`${decodeURIComponent(one[1]!)}\u0000${decodeURIComponent(one[2]!)}`);
    if (!queue) return notFound();
    json(200, this.describe(queue));
  }

  private describe(queue: StubQueue) {
    return { auto_delete: false, exclusive: false, policy: null, ...queue, vhost: queue.vhost ?? '/' };
  }
}
