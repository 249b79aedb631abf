/** Median and range of repeated figures, and percentiles of latencies. */
export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

export function summarize(values: readonly number[]): Summary {
  const s = [...values].filter((v) => !Number.isNaN(v)).sort((a, b) => a - b); // Infinity stays: never arrived
  if (s.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s.at(-1)!, n: s.length };
}

/** The p-th percentile (nearest rank) of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const perSecond = (n: number, ms: number) => (n / ms) * 1000;
