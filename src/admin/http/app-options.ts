import type { Registry } from 'prom-client';
import { z } from 'zod';
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import { loggerOption } from '../../core/options.js';
import type { AdminServiceStore } from '../admin-service.js';
import { tokenListSchema } from '../../ports/api-token.js';
import { STORE_NAME, STORE_NAME_RULE } from '../../ports/store-name.js';

const isFn = (v: unknown) => typeof v === 'function';

const registrySchema = z.custom<Registry>(
  (v) => isFn((v as Registry | null)?.metrics) && isFn((v as Registry | null)?.getMetricsAsJSON),
  'must be a prom-client Registry',
);

const storeSchema = z.custom<AdminServiceStore>(
  (v) =>
    isFn((v as Partial<AdminServiceStore> | null)?.admin?.listDeadLetters) &&
    isFn((v as Partial<AdminServiceStore> | null)?.inbox?.inboxRecordedAt),
  'must be a Surety store (with its admin and inbox concerns)',
);

/** `{ [name]: store }`; insertion order is display order and the first is the default. */
const storesSchema = z.record(z.string(), storeSchema).superRefine((stores, ctx) => {
  const names = Object.keys(stores);
  if (names.length === 0) ctx.addIssue({ code: 'custom', message: 'must name at least one store' });
  for (const name of names) {
    if (!STORE_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: STORE_NAME_RULE });
  }
});

const baseSchema = z.object({
  /** The one store to serve (named "default"); or give `stores`. */
  store: storeSchema.optional(),
  /** Several stores to serve from one console, by name; or give `store`. */
  stores: storesSchema.optional(),
  /** API tokens; the token name is the actor in the audit log. */
  tokens: tokenListSchema,
  allowEdit: z.boolean().default(false),
  inboxWindowMs: z.number().int().positive().optional(),
  /** The public path prefix the app is reachable under (`/surety`); requests are routed with or without it. */
  basePath: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be empty or a path like /surety (no trailing slash)')
    .default(''),
  /**
   * Mark the session cookie Secure. Unset: Secure when the request came over HTTPS (or, with
   * `trustProxy`, when the proxy says so); true or false decides for every request.
   */
  cookieSecure: z.boolean().optional(),
  /** Believe the X-Forwarded-Proto header of a proxy in front of the server (only behind one that sets it). */
  trustProxy: z.boolean().default(false),
  /** HMAC key for session cookies; share it between instances behind one load balancer. Random per process otherwise. */
  sessionSecret: z.string().min(32, 'must be at least 32 characters').optional(),
  sessionTtlMs: z
    .number()
    .int()
    .min(60_000, 'must be at least 60000 (1 min)')
    .max(7 * 86_400_000, 'must be at most 7 days')
    .default(8 * 3_600_000),
  /** Other origins (scheme://host:port) the console is served under, e.g. behind a proxy. */
  allowedOrigins: z
    .array(z.url({ error: 'must be an origin like https://ops.example.com' }).transform((u) => new URL(u).origin))
    .default([]),
  registry: registrySchema.optional(),
  /**
   * More registries /metrics serves, e.g. relays' and consumers' own (`relay.registry`,
   * `consumer.metricsRegistry`); metrics of the same name are added up by label set.
   */
  registries: z.array(registrySchema).default([]),
  /** Serves its result at /api/doctor. */
  doctor: z.custom<() => Promise<unknown>>(isFn, 'must be a function returning a promise').optional(),
  logger: loggerOption('surety-admin'),
  clock: z.custom<Clock>((v) => isFn((v as Clock | null)?.now), 'must have now()').default(systemClock),
  /** Folder of the console's static files; false serves no console. Defaults to the package's console/. */
  consoleDir: z.union([z.string().min(1), z.literal(false)]).optional(),
  maxBodyBytes: z
    .number()
    .int()
    .min(1_024)
    .max(16 * 1_048_576)
    .default(65_536),
  maxJobRatePerSecond: z.number().positive().max(1_000_000).default(10_000),
  /** How long the merged overview and lineage wait for one store before reporting it unavailable. */
  storeTimeoutMs: z.number().int().min(100).max(600_000).default(10_000),
  /**
   * How long polled answers are reused, so consoles and probes cost each database one read per
   * window however many ask: the overview (each store's and the merged one), readiness and the
   * doctor's report. 0 only shares a read in flight.
   */
  cache: z
    .strictObject({
      overviewMs: z.number().int().min(0).max(60_000).default(2_000),
      readinessMs: z.number().int().min(0).max(60_000).default(1_000),
      doctorMs: z.number().int().min(0).max(600_000).default(5_000),
    })
    .prefault({}),
  /**
   * Admin reads (lists, rows, lineage, overview) running at once on one store; more wait their
   * turn. Keep it below the store's pool size: the relay and consumers share that pool.
   */
  maxConcurrentReads: z.number().int().min(1).max(64).default(2),
  jobs: z
    .strictObject({
      /** Run bulk jobs in this process (default). Turn off where another process runs them. */
      enabled: z.boolean().default(true),
      owner: z.string().min(1).max(64).optional(),
      leaseMs: z.number().int().min(1_000).max(3_600_000).optional(),
      batchSize: z.number().int().min(1).max(10_000).optional(),
      pollIntervalMs: z.number().int().min(10).max(600_000).optional(),
      maxConcurrentJobs: z.number().int().min(1).max(64).optional(),
    })
    .default({ enabled: true }),
});

export const appOptionsSchema = baseSchema.superRefine((o, ctx) => {
  if (o.store !== undefined && o.stores !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['stores'], message: 'give either store or stores, not both' });
  } else if (o.store === undefined && o.stores === undefined) {
    ctx.addIssue({ code: 'custom', path: ['store'], message: 'is required (a Surety store), or give stores' });
  }
});

export type AdminAppOptions = z.input<typeof appOptionsSchema>;
export type ParsedAppOptions = Readonly<z.output<typeof appOptionsSchema>>;
