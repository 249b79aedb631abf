import type { DoctorReport } from '../../admin/doctor/index.js';
import { startAdminServer, type AdminServer } from '../../admin/http/admin-server.js';
import type { SuretyConfig } from '../../config/schema.js';
import type { Logger } from '../../core/logger.js';
import type { SuretyStore } from '../context.js';

/** Serves the HTTP API, the console and the bulk-job runner from the config's console section. */
export function startConsole(
  config: SuretyConfig,
  store: SuretyStore,
  doctor: () => Promise<DoctorReport>,
  logger: Logger,
): Promise<AdminServer> {
  const c = config.console;
  return startAdminServer({
    store,
    tokens: c.tokens,
    allowEdit: c.allowEdit,
    ...(c.inboxWindowMs > 0 ? { inboxWindowMs: c.inboxWindowMs } : {}),
    basePath: c.basePath.replace(/\/+$/, ''),
    cookieSecure: c.cookieSecure,
    allowedOrigins: c.allowedOrigins,
    ...(c.sessionSecret ? { sessionSecret: c.sessionSecret } : {}),
    doctor,
    logger,
    host: c.host,
    port: c.port,
  });
}
