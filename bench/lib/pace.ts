/**
 * Runs `commit` `total` times at a steady `rate` per second, one after the other (a commit that runs
 * late makes the next start at once), and returns each commit's completion time (machine clock, ms)
 * by the id it returned.
 */
export async function atPace(
  rate: number,
  total: number,
  commit: () => Promise<string>,
): Promise<[id: string, at: number][]> {
  const out: [string, number][] = [];
  const gap = 1000 / rate;
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = start + i * gap - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const id = await commit();
    out.push([id, now()]);
  }
  return out;
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
export const now = () => performance.timeOrigin + performance.now();
