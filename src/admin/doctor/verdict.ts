import type { DoctorCheck, DoctorLevel, DoctorPlace, DoctorVerdict } from './types.js';

const ORDER: readonly DoctorPlace[] = ['producer', 'broker', 'consumer'];

/**
 * The most upstream failure wins (a relay that is down explains an empty queue downstream), then
 * the most upstream warning; within a place, the first check in report order.
 */
export function verdictOf(checks: readonly DoctorCheck[]): DoctorVerdict {
  for (const level of ['fail', 'warn'] as const satisfies readonly DoctorLevel[]) {
    for (const place of ORDER) {
      const check = checks.find((c) => c.place === place && c.level === level);
      if (check) {
        return {
          place,
          level,
          message: `${place}: ${check.message}`,
          nextStep: check.nextStep ?? 'look at the checks above',
        };
      }
    }
  }
  return {
    place: null,
    level: 'ok',
    message: 'producer, broker and consumer look healthy',
    nextStep: 'nothing to do; if a message is still missing, follow it with `surety outbox show <messageId>`',
  };
}

/** The worst level of a list of checks. */
export function worstLevel(checks: readonly DoctorCheck[]): DoctorLevel {
  if (checks.some((c) => c.level === 'fail')) return 'fail';
  if (checks.some((c) => c.level === 'warn')) return 'warn';
  return 'ok';
}
