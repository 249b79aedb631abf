/**
 * BENCH_ALLOC_PROF=<dir>: a contender samples what it allocates during its run, garbage included
 * (Node's --heap-prof keeps only what survives, which says nothing of GC churn), and writes a
 * .heapprofile there, readable in Chrome DevTools' Memory tab.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export async function profileAllocations<R>(run: () => Promise<R>): Promise<R> {
  const dir = process.env.BENCH_ALLOC_PROF;
  if (!dir) return run();
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  try {
    return await run();
  } finally {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `alloc.${process.pid}.heapprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}
