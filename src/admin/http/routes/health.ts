import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { describeError } from '../../../core/errors.js';
import type { StoreEntry } from '../../store-directory.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { json } from '../schemas/common.js';

const status = (example: string) => z.object({ status: z.string().openapi({ example }) });

const healthz = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['health'],
  summary: 'The process is up (no credential needed)',
  responses: { 200: json(status('ok'), 'Up') },
});

const readyz = createRoute({
  method: 'get',
  path: '/readyz',
  tags: ['health'],
  summary: "Every store's database answers (no credential needed)",
  responses: {
    200: json(status('ready'), 'Ready'),
    503: json(status('unavailable'), 'A database does not answer'),
  },
});

const READY_TIMEOUT_MS = 3_000;

export function healthRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(healthz, (c) => c.json({ status: 'ok' }, 200));
  app.openapi(readyz, async (c) => {
    const ready = await Promise.all(deps.stores.entries.map((e) => answers(e.store, e.name)));
    return ready.every(Boolean) ? c.json({ status: 'ready' }, 200) : c.json({ status: 'unavailable' }, 503);
  });

  async function answers(store: StoreEntry['store'], name: string): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        store.relays(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), READY_TIMEOUT_MS);
        }),
      ]);
      return true;
    } catch (err) {
      deps.options.logger.warn({ store: name, err: describeError(err) }, 'readiness check failed');
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}
