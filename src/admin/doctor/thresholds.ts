import { z } from 'zod';
import { parseOptions } from '../../core/options.js';

const ms = z.number().int().min(0);

/** When a figure becomes a warning or a failure. Times in milliseconds. */
export const doctorThresholdsSchema = z.strictObject({
  /** The oldest pending outbox row is a warning from this age... */
  pendingAgeWarnMs: ms.default(60_000),
  /** ...and a failure from this age. */
  pendingAgeFailMs: ms.default(300_000),
  /** A relay that has not claimed for this long is considered stopped. */
  relayStaleMs: ms.default(60_000),
  /** Ready messages on a queue that has consumers, from which the backlog is a warning. */
  queueBacklogWarn: z.number().int().min(1).default(10_000),
  /** The window in which a consumer group's new failures are counted. */
  failureWindowMs: ms.min(1_000).default(900_000),
  /** Failures in the window, with none resolved, from which a group counts as failing. */
  failingMinCount: z.number().int().min(1).default(5),
  /** A dead letter due for a retry this long (no replayer takes it) is a warning... */
  overdueRetryWarnMs: ms.default(60_000),
  /** ...and a failure from this long. */
  overdueRetryFailMs: ms.default(900_000),
});

export type DoctorThresholds = z.output<typeof doctorThresholdsSchema>;
export type DoctorThresholdsInput = z.input<typeof doctorThresholdsSchema>;

export function resolveThresholds(input: DoctorThresholdsInput | undefined): DoctorThresholds {
  const t = parseOptions(doctorThresholdsSchema, input ?? {}, 'doctor.thresholds');
  return t;
}
