import { escapeControlChars } from '../core/control-chars.js';
import type { JobInput } from '../admin/admin-schemas.js';
import { JobRunner } from '../admin/jobs/job-runner.js';
import type { AdminJob } from '../ports/admin-store.js';
import { EXIT } from './cli-errors.js';
import type { AdminContext } from './context.js';
import { asUsageError } from './flags.js';
import { writeJson, type CliIo } from './io.js';
import { createProgress } from './output/progress.js';

const POLL_MS = 200;

/**
 * Creates a bulk job (audited like any action) and runs it in this process with a progress bar. A
 * job that matched nothing is created done: it says so and exits 0. Ctrl-C stops after the current
 * batch; the job keeps its cursor and any job runner (e.g. the one in `surety start`) finishes it
 * once this process's lease expires.
 */
export async function runBulkJob(ctx: AdminContext, io: CliIo, input: JobInput, json: boolean): Promise<number> {
  let created: Awaited<ReturnType<AdminContext['admin']['createJob']>>;
  try {
    created = await ctx.admin.createJob(ctx.actor, input);
  } catch (err) {
    throw asUsageError(err);
  }
  const { job } = created;
  for (const w of created.warnings) io.err.write(`warning: ${escapeControlChars(w)}\n`);
  let final: AdminJob = job;
  if (job.total > 0 && job.status === 'running') {
    final = await follow(ctx, io, job);
  }
  if (json) writeJson(io, final);
  else io.out.write(escapeControlChars(summary(final), { keepNewlines: true }));
  if (final.status === 'running') return EXIT.failed; // interrupted: not finished here
  return final.status === 'done' ? EXIT.ok : EXIT.failed;
}

async function follow(ctx: AdminContext, io: CliIo, job: AdminJob): Promise<AdminJob> {
  // The progress bar and summary report the job; log lines would only garble them.
  const runner = new JobRunner({ store: ctx.store, pollIntervalMs: 100, jobId: job.id, logger: null });
  const progress = createProgress(io, `job ${job.id} ${job.kind}`);
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
  };
  process.once('SIGINT', onSignal);
  runner.start();
  runner.wake();
  let current = job;
  try {
    for (;;) {
      current = await ctx.admin.getJob(job.id);
      progress.update(current.done, current.total, current.changed);
      if (current.status !== 'running' || interrupted) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    progress.stop();
    process.removeListener('SIGINT', onSignal);
    await runner.stop();
  }
  if (interrupted) current = await ctx.admin.getJob(job.id);
  return current;
}

function summary(job: AdminJob): string {
  // Created done: no runner ever needs to take it up.
  if (job.total === 0) return `job ${job.id} (${job.kind}) done: nothing matched, no row changed\n`;
  const head = `job ${job.id} (${job.kind}) ${job.status}: ${job.done}/${job.total} rows examined, ${job.changed} changed`;
  if (job.status === 'running')
    return `${head}\nstopped here; a job runner (surety start) resumes it from row ${job.cursor}\n`;
  if (job.status === 'failed') return `${head}\nerror: ${job.error ?? 'unknown'}\n`;
  return `${head}\n`;
}
