/** The doctor: where a message is stuck — producer, broker or consumer — and what to do next. */
export { isDatabaseFailure, runDoctor } from './run-doctor.js';
export { verdictOf, worstLevel } from './verdict.js';
export { mergeDoctorReports, type StoreDoctorCheck, type StoreDoctorReport } from './merge-reports.js';
export { doctorThresholdsSchema, resolveThresholds } from './thresholds.js';
export type { DoctorThresholds, DoctorThresholdsInput } from './thresholds.js';
export type {
  DoctorCheck,
  DoctorFacts,
  DoctorInput,
  DoctorLevel,
  DoctorPlace,
  DoctorReport,
  DoctorReads,
  DoctorStore,
  DoctorVerdict,
} from './types.js';
export type { BrokerProbe, QueueState } from '../../ports/broker-probe.js';
