import type { Registry } from 'prom-client';
import type { DoctorReport } from '../../admin/doctor/index.js';
import { startAdminServer, type AdminServer } from '../../admin/http/admin-server.js';
import { namesDatabases } from '../../config/databases.js';
import type { SuretyConfig } from '../../config/schema.js';
import type { Logger } from '../../core/logger.js';
import type { NamedStore } from '../context.js';

/**
 * Serves the HTTP API, the console and the bulk-job runners from the config's console section: the
 * one `database` as the app's `store`, or every one of `databases` as its `stores`, by name.
 */
export function startConsole(
  config: SuretyConfig,
  stores: readonly NamedStore[],
  doctor: () => Promise<DoctorReport>,
  logger: Logger,
  metrics: { registry: Registry; registries: readonly Registry[] },
): Promise<AdminServer> {
  const c = config.console;
  const served = namesDatabases(config)
    ? { stores: Object.fromEntries(stores.map((s) => [s.name, s.store])) }
    : { store: stores[0]!.store };
  return startAdminServer({
    ...served,
    tokens: c.tokens,
    allowEdit: c.allowEdit,
    ...(c.inboxWindowMs > 0 ? { inboxWindowMs: c.inboxWindowMs } : {}),
    basePath: c.basePath.replace(/\/+$/, ''),
    ...(c.cookieSecure === undefined ? {} : { cookieSecure: c.cookieSecure }),
    trustProxy: c.trustProxy,
    allowedOrigins: c.allowedOrigins,
    ...(c.sessionSecret ? { sessionSecret: c.sessionSecret } : {}),
    doctor,
    logger,
    registry: metrics.registry,
    registries: [...metrics.registries],
    host: c.host,
    port: c.port,
  });
}
