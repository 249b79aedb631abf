/**
 * Operations: the admin service (the one path to every operator action), the HTTP API and console,
 * and the bulk-job runner. Entry point `surety/admin`.
 */
export { AdminService } from './admin-service.js';
export type { ActionResult, AdminServiceOptions, AdminServiceStore } from './admin-service.js';
export {
  AdminError,
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  UnauthenticatedError,
} from './admin-errors.js';
export type { AdminErrorCode, InputIssue } from './admin-errors.js';
export {
  parseTime,
  MAX_PAGE,
  DEFAULT_PAGE,
  DEAD_LETTER_STATUSES,
  OUTBOX_STATUSES,
  JOB_KINDS,
} from './admin-schemas.js';
export type {
  AuditFilterInput,
  DeadLetterFilterInput,
  JobInput,
  OutboxFilterInput,
  PageInput,
} from './admin-schemas.js';
export { formatDuration } from './inbox-window.js';
export { StoreDirectory } from './store-directory.js';
export { STORE_NAME, DEFAULT_STORE_NAME } from '../ports/store-name.js';
export type { ServedStore, StoreEntry, StoreDirectoryOptions } from './store-directory.js';
export type { MergedLineage, FromStore } from './lineage-merge.js';
export type { MergedOverview } from './overview-merge.js';
export type { StoreUnavailable } from './store-fanout.js';
export { hashToken } from './auth/token-set.js';
export type { TokenConfig } from '../ports/api-token.js';
export { createAdminApp } from './http/admin-app.js';
export type { AdminApp, AdminAppOptions } from './http/admin-app.js';
export { startAdminServer } from './http/admin-server.js';
export type { AdminServer } from './http/admin-server.js';
export { JobRunner } from './jobs/job-runner.js';
export type { JobRunnerOptions } from './jobs/job-runner.js';
export type * from '../ports/admin-store.js';
export * from './doctor/index.js';
export { loadConfig, configSchema, ConfigError } from '../config/index.js';
export type {
  LoadConfigOptions,
  LoadedConfig,
  SuretyConfig,
  SuretyConfigInput,
  ConfigProblem,
} from '../config/index.js';
