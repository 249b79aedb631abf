import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { parseOptions } from '../../core/options.js';
import { createAdminApp, type AdminApp, type AdminAppOptions } from './admin-app.js';

const listenSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65_535).default(8090),
});

export interface AdminServer {
  /** Where the API and console answer, including the base path, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  readonly app: AdminApp;
  /** Stops the job runner and the server (open connections are closed). */
  close(): Promise<void>;
}

/**
 * Runs the admin API and console on their own HTTP server (loopback by default; put TLS in front
 * of it to expose it, and set `cookieSecure`).
 * @example
 * const server = await startAdminServer({ store, tokens, port: 8090 });
 * console.log(`console at ${server.url}/`);
 */
export async function startAdminServer(
  options: AdminAppOptions & { host?: string; port?: number },
): Promise<AdminServer> {
  const { host, port, ...appOptions } = options;
  const listen = parseOptions(listenSchema, { host, port }, 'admin');
  const app = createAdminApp(appOptions);
  const server = createServer((req, res) => void app.listener(req, res));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen.port, listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await app.close();
    throw err;
  }
  const bound = (server.address() as AddressInfo).port;
  const hostPart = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  return {
    url: `http://${hostPart}:${bound}${appOptions.basePath ?? ''}`,
    port: bound,
    app,
    async close() {
      await app.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
