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
export type {
  AuditFilterInput,
  DeadLetterFilterInput,
  JobInput,
  OutboxFilterInput,
  PageInput,
} from './admin-schemas.js';
export type { StoreDirectoryOptions } from './store-directory.js';
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
export { runDoctor, mergeDoctorReports } from './doctor/index.js';
export type {
  StoreDoctorCheck,
  StoreDoctorReport,
  DoctorThresholds,
  DoctorThresholdsInput,
  DoctorCheck,
  DoctorFacts,
  DoctorInput,
  DoctorLevel,
  DoctorPlace,
  DoctorReport,
  DoctorStore,
  DoctorVerdict,
  BrokerProbe,
  QueueState,
} from './doctor/index.js';
