import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { systemClock, type Clock } from '../../core/clock.js';
import { describeError, SuretyError } from '../../core/errors.js';
import { loggerOption, parseOptions } from '../../core/options.js';
import type { AdminJob, AdminStore } from '../../ports/admin-store.js';
import { isLockConflict } from './lock-conflict.js';
import { RowPacer } from './row-pacer.js';

/** What the runner needs of a store. `failJob` takes the owner, so a runner that lost its job fails nothing. */
export interface JobRunnerStore {
  readonly admin: Pick<AdminStore, 'claimJob' | 'runJobBatch' | 'releaseJob' | 'failJob'>;
}

/** After this many lock conflicts in a row, retries back off a little (InnoDB reports deadlocks at once). */
const IMMEDIATE_CONFLICT_RETRIES = 3;

const schema = z.object({
  store: z.custom<JobRunnerStore>(
    (v) => typeof (v as Partial<JobRunnerStore> | null)?.admin?.runJobBatch === 'function',
    'must be a Surety store (with its admin concern)',
  ),
  owner: z.string().min(1).max(64).optional(),
  /** Run only this job (the CLI runs the job it just created, never an older orphan). */
  jobId: z.number().int().positive().optional(),
  /** A job whose runner dies is taken over by another runner this long after its last batch. */
  leaseMs: z.number().int().min(1_000).max(3_600_000).default(30_000),
  /** Upper bound on rows per batch (one transaction); a job uses at most a fifth of its rate per batch. */
  batchSize: z.number().int().min(1).max(10_000).default(500),
  /** How often to look for jobs to run (new, or left by a runner that died). */
  pollIntervalMs: z.number().int().min(10).max(600_000).default(1_000),
  maxConcurrentJobs: z.number().int().min(1).max(64).default(2),
  /** Consecutive failed batches after which the job is marked failed (lock conflicts are retried, not counted). */
  maxBatchFailures: z.number().int().min(1).max(1_000).default(10),
  clock: z.custom<Clock>((v) => typeof (v as Clock | null)?.now === 'function', 'must have now()').default(systemClock),
  logger: loggerOption('surety-jobs'),
});

export type JobRunnerOptions = z.input<typeof schema>;

/**
 * Runs bulk admin jobs: claims a running job with a lease, works through it in batches (each batch
 * acts on its rows and advances the cursor in one transaction, renewing the lease) at no more than
 * the job's rate, and stops when the job is done, cancelled or taken over. A job whose runner died
 * is resumed by any runner once its lease expires, from its cursor.
 * @example
 * const runner = new JobRunner({ store });
 * runner.start();
 * // after creating a job: runner.wake();
 */
export class JobRunner {
  readonly owner: string;
  private readonly o: Readonly<z.output<typeof schema>>;
  private readonly active = new Map<number, Promise<void>>();
  /** Pending timers: stop() ends them all, wake() only the poll wait (never a batch's pacing). */
  private readonly sleepers = new Map<() => void, boolean>();
  private loop: Promise<void> | undefined;
  private stopped = true;
  private woken = false;

  constructor(options: JobRunnerOptions) {
    this.o = parseOptions(schema, options, 'jobs');
    this.owner = this.o.owner ?? `jobs-${hostname().slice(0, 30)}-${process.pid}-${randomBytes(3).toString('hex')}`;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  /** Stops claiming, waits for running batches to end and releases held jobs so another runner resumes them at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const resolve of [...this.sleepers.keys()]) resolve();
    await this.loop;
    await Promise.all(this.active.values());
    this.loop = undefined;
  }

  /** Looks for jobs now instead of at the next poll (call it after creating a job). */
  wake(): void {
    this.woken = true;
    for (const [resolve, wakeable] of [...this.sleepers]) if (wakeable) resolve();
  }

  /** Ids of the jobs this runner is working on. */
  get activeJobs(): number[] {
    return [...this.active.keys()];
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      try {
        await this.claimAvailable();
      } catch (err) {
        this.o.logger.warn({ err: describeError(err) }, 'claiming admin jobs failed; will retry');
      }
      if (!this.woken) await this.sleep(this.o.pollIntervalMs, true);
    }
  }

  private async claimAvailable(): Promise<void> {
    while (!this.stopped && this.active.size < this.o.maxConcurrentJobs) {
      const job = await this.o.store.admin.claimJob(this.owner, this.o.clock.now(), this.o.leaseMs, this.o.jobId);
      // Our own job comes back only when a batch outlived the lease; its loop is still running it.
      if (!job || this.active.has(job.id)) return;
      this.o.logger.info({ jobId: job.id, kind: job.kind, done: job.done, total: job.total }, 'admin job claimed');
      const running = this.runJob(job)
        .catch((err) => this.o.logger.error({ jobId: job.id, err: describeError(err) }, 'admin job stopped'))
        .finally(() => {
          this.active.delete(job.id);
          this.wake();
        });
      this.active.set(job.id, running);
    }
  }

  private async runJob(job: AdminJob): Promise<void> {
    const { store, clock, logger, leaseMs } = this.o;
    const limit = Math.max(1, Math.min(this.o.batchSize, Math.floor(job.ratePerSecond / 5)));
    const pacer = new RowPacer(job.ratePerSecond);
    // Taken over: the previous owner's last batch may have started just before the claim (updatedAt).
    if (job.done > 0) pacer.holdFor(job.updatedAt + pacer.interval(limit) - clock.now());
    let failures = 0;
    let conflicts = 0;
    while (!this.stopped) {
      // A timer may fire a little early: wait until the pacer really allows the batch.
      for (let wait = pacer.delay(); wait > 0 && !this.stopped; wait = pacer.delay()) await this.sleep(wait);
      if (this.stopped) break;
      pacer.started(limit);
      let next: AdminJob | undefined;
      try {
        next = await store.admin.runJobBatch(job.id, this.owner, limit, clock.now(), leaseMs);
        failures = 0;
        conflicts = 0;
      } catch (err) {
        if (isLockConflict(err)) {
          // Rolled back whole over a lock conflict: says nothing about the job, so run it again now.
          conflicts += 1;
          pacer.undo();
          logger.info({ jobId: job.id, conflicts, err: describeError(err) }, 'admin job batch hit a lock conflict');
          if (conflicts > IMMEDIATE_CONFLICT_RETRIES) await this.sleep(Math.min(50 * 2 ** conflicts, 2_000));
          continue;
        }
        failures += 1;
        logger.warn({ jobId: job.id, failures, err: describeError(err) }, 'admin job batch failed');
        if (failures >= this.o.maxBatchFailures) {
          await this.fail(job, failures, err);
          return;
        }
        await this.sleep(Math.min(250 * 2 ** failures, 10_000));
        continue;
      }
      if (this.stopped && next?.status === 'running') break;
      if (!next) {
        logger.info({ jobId: job.id }, 'admin job released (cancelled or taken over)');
        return;
      }
      if (next.status !== 'running') {
        logger.info({ jobId: job.id, status: next.status, done: next.done, changed: next.changed }, 'admin job ended');
        return;
      }
    }
    await store.admin
      .releaseJob(job.id, this.owner, clock.now())
      .catch((err) => logger.warn({ jobId: job.id, err: describeError(err) }, 'releasing admin job failed'));
  }

  /**
   * Marks the job failed. Viewers read the job's error, so it holds a code and a fixed sentence; the
   * error itself (a driver's message may name tables, hosts or values) goes only to the log.
   */
  private async fail(job: AdminJob, failures: number, err: unknown): Promise<void> {
    const { store, clock, logger } = this.o;
    const code = err instanceof SuretyError ? err.code : 'SURETY_INTERNAL_ERROR';
    const error = `${code}: ${failures} batches in a row failed; the job runner's log has the error`;
    logger.error({ jobId: job.id, failures, err: describeError(err) }, 'admin job failed');
    if (!(await store.admin.failJob(job.id, error, clock.now(), this.owner))) {
      logger.info({ jobId: job.id }, 'admin job not marked failed: it ended or another runner holds it');
    }
  }

  private sleep(ms: number, wakeable = false): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.set(done, wakeable);
    });
  }
}
