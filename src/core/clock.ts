/** Source of time. Inject a manual clock in tests to drive backoff schedules deterministically. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() });
