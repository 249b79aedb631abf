import { z } from 'zod';
import { tokenConfigSchema } from '../ports/api-token.js';
import { databaseRules } from './database-rules.js';
import { databaseSchema, databasesSchema } from './database-schema.js';
import { duration } from './duration.js';
import { brokersSchema as kafkaBrokers } from '../transports/kafka/options.js';
import { nodeUrlsSchema } from './node-urls.js';

const positive = z.number().int().min(1);

/** Brokers the CLI can open from a config file; code can use any transport. */
export const TRANSPORT_KINDS = ['rabbitmq', 'embedded', 'nats', 'redis', 'kafka'] as const;
type TransportKind = (typeof TRANSPORT_KINDS)[number];

const urls = z.union([z.string(), z.array(z.string())], { error: 'must be a URL or a list of them, one per node' });

/** What `url` holds for each kind that has one, and the keys only some kinds read. */
const URL_HINT: Partial<Record<TransportKind, string>> = {
  rabbitmq: 'amqp://user:pass@host:5672/vhost',
  nats: 'nats://host:4222, or a list of servers',
  redis: 'redis://[user:password@]host:6379[/db]',
};
const KIND_KEYS = {
  exchange: ['rabbitmq'],
  managementUrl: ['rabbitmq'],
  path: ['embedded'],
  subjectPrefix: ['nats'],
  ackWaitMs: ['nats'],
  maxDeliver: ['nats'],
  brokers: ['kafka'],
  clientId: ['kafka'],
  prefix: ['redis'],
  maxLen: ['redis'],
  maxAgeMs: ['redis'],
  claimIdleMs: ['redis'],
  maxDeliveries: ['redis'],
} as const satisfies Record<string, readonly TransportKind[]>;

const natsUrl = z.string().regex(/^(nats|tls):\/\//, { error: 'must start with nats:// or tls://' });
const redisUrl = z.string().regex(/^rediss?:\/\//, { error: 'must start with redis:// or rediss://' });

const transport = z
  .strictObject({
    kind: z.enum(TRANSPORT_KINDS),
    /** RabbitMQ: `amqp://user:pass@host:5672/vhost`; NATS: `nats://host:4222`; or a list, one per cluster node. */
    url: urls.optional(),
    /** RabbitMQ: the exchange topics are published to. */
    exchange: z.string().min(1).optional(),
    /** RabbitMQ management API (or a list, one per node), for unacked counts and policies in `surety doctor`. */
    managementUrl: nodeUrlsSchema('http', 'transport.managementUrl').optional(),
    /** Embedded: the log file. */
    path: z.string().min(1).optional(),
    /** NATS: subjects are `<subjectPrefix>.<topic>` (default: the topic itself). */
    subjectPrefix: z.string().min(1).optional(),
    /** NATS: how long JetStream waits for an ack before redelivering. */
    ackWaitMs: duration(100).optional(),
    /** NATS: deliveries before JetStream gives up on a message and Surety records it as a dead letter. */
    maxDeliver: z.number().int().min(2).optional(),
    /** Kafka: bootstrap brokers, `host:port`, one or a list. */
    brokers: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    /** Kafka: the client id the brokers see (default `surety`). */
    clientId: z.string().min(1).optional(),
    /** Redis: streams are `<prefix><topic>` (default `surety:`). */
    prefix: z.string().min(1).optional(),
    /** Redis: trim each stream to about this many entries (XADD MAXLEN ~); the doctor warns when unacked ones are near it. */
    maxLen: positive.optional(),
    /** Redis: trim entries older than this (XADD MINID ~); one of maxLen or maxAgeMs. */
    maxAgeMs: duration(1).optional(),
    /** Redis: an entry idle this long in a consumer's pending list is claimed by another (a dead consumer's). */
    claimIdleMs: duration(100).optional(),
    /** Redis: deliveries before the entry is recorded as a dead letter. */
    maxDeliveries: positive.optional(),
    /** The consumers' queues (NATS: `<stream>.<consumer>`), checked by `surety doctor`. */
    queues: z.array(z.string().min(1)).default([]),
    /** Whether producers publish persistent messages (Surety's relay always does). */
    persistent: z.boolean().default(true),
  })
  .superRefine((t, ctx) => {
    const hint = URL_HINT[t.kind];
    if (hint === undefined) {
      if (t.url !== undefined)
        ctx.addIssue({ code: 'custom', path: ['url'], message: `is not used by kind "${t.kind}"` });
    } else if (t.url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: `is required for kind "${t.kind}" (${hint})` });
    } else {
      const rules =
        t.kind === 'rabbitmq'
          ? nodeUrlsSchema('amqp', 'transport.url')
          : t.kind === 'nats'
            ? z.union([natsUrl, z.array(natsUrl).min(1)])
            : z.string({ error: 'must be one redis:// URL' }).pipe(redisUrl);
      // Passed on as they are, so that the message shows the value as the url's own check would.
      for (const issue of rules.safeParse(t.url).error?.issues ?? [])
        ctx.addIssue({ ...issue, path: ['url', ...issue.path] } as Parameters<typeof ctx.addIssue>[0]);
    }
    if (t.kind === 'kafka') {
      if (t.brokers === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['brokers'],
          message: 'is required for kind "kafka" (host:9092, or a list)',
        });
      else
        for (const issue of kafkaBrokers.safeParse(t.brokers).error?.issues ?? [])
          ctx.addIssue({ ...issue, path: ['brokers', ...issue.path] } as Parameters<typeof ctx.addIssue>[0]);
    }
    if (t.maxLen !== undefined && t.maxAgeMs !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['maxAgeMs'],
        message: 'cannot be combined with "maxLen": choose one trim',
      });
    if (t.kind === 'embedded' && t.path === undefined)
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'is required for kind "embedded" (the log file)' });
    for (const [key, kinds] of Object.entries(KIND_KEYS) as [keyof typeof KIND_KEYS, readonly TransportKind[]][]) {
      if (t[key] !== undefined && !kinds.includes(t.kind))
        ctx.addIssue({ code: 'custom', path: [key], message: `is not used by kind "${t.kind}"` });
    }
  });

const relay = z.strictObject({
  enabled: z.boolean().default(true),
  /** With `databases`: the ones whose outbox the relay drains. Default: all. */
  databases: z
    .array(z.string().min(1))
    .min(1, { error: 'must name at least one database (or set relay.enabled to false)' })
    .optional(),
  relayId: z.string().min(1).max(64).optional(),
  batchSize: positive.optional(),
  maxInFlight: positive.optional(),
  pollIntervalMs: duration(1).optional(),
  leaseMs: duration(100).optional(),
  maxAttempts: positive.optional(),
  ordered: z.boolean().optional(),
  /** PostgreSQL: claims as row locks of an open transaction (default true); false for lease claims. */
  lockedClaims: z.boolean().optional(),
  /** With locked claims: batches (so pool connections) in flight at once. */
  maxLockedBatches: positive.optional(),
  /** How often the relay writes its heartbeat row (the doctor reads it). */
  heartbeatMs: duration(100).optional(),
});

const replayer = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** Module exporting the consumer(s) to replay through; relative to the config file. */
    module: z.string().min(1).optional(),
    /** With `databases`: the one whose store a module exporting a function receives. Default: the first. */
    database: z.string().min(1).optional(),
    ratePerSecond: z.number().positive().default(100),
    intervalMs: duration(10).optional(),
    batchSize: positive.optional(),
    leaseMs: duration(100).optional(),
  })
  .superRefine((r, ctx) => {
    if (r.enabled && r.module === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['module'],
        message: 'is required when replayer.enabled is true (a module exporting your Consumer)',
      });
  });

const consoleSection = z
  .strictObject({
    enabled: z.boolean().default(false),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65_535).default(8080),
    basePath: z
      .string()
      .regex(/^\/([A-Za-z0-9._~-]+\/?)*$/, { error: 'must be a path starting with /, e.g. /surety' })
      .default('/'),
    /** Force the session cookie's Secure flag; unset, it is Secure when the request came over HTTPS. */
    cookieSecure: z.boolean().optional(),
    /** Believe X-Forwarded-Proto / X-Forwarded-Prefix from a reverse proxy in front of the console. */
    trustProxy: z.boolean().default(false),
    /** Other origins the console is reached under, e.g. behind a proxy. */
    allowedOrigins: z.array(z.url({ error: 'must be an origin like https://ops.example.com' })).default([]),
    /** HMAC key of session cookies, shared by instances behind one load balancer (at least 32 characters). */
    sessionSecret: z.string().min(32, { error: 'must be at least 32 characters' }).optional(),
    /** Allow "edit then replay" of a dead letter's payload. */
    allowEdit: z.boolean().default(false),
    tokens: z.array(tokenConfigSchema).default([]),
    /** Replaying a message whose inbox record is older than this warns that the handler may run again. */
    inboxWindowMs: duration(0).default(7 * 86_400_000),
  })
  .superRefine((c, ctx) => {
    if (c.enabled && c.tokens.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['tokens'],
        message: 'at least one token is required when console.enabled is true',
      });
    // Names the other entry rather than the name: nothing under tokens is echoed.
    const names = new Map<string, number>();
    c.tokens.forEach((t, i) => {
      const first = names.get(t.name);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['tokens', i, 'name'],
          message: `is the name of tokens[${first}] too: token names must be unique`,
        });
      else names.set(t.name, i);
    });
  });

const doctor = z.strictObject({
  /** The consumers' retry engine, for the delivery-limit check. */
  retryStrategy: z.enum(['dead-letter-table', 'broker']).default('dead-letter-table'),
  pendingAgeWarnMs: duration().optional(),
  pendingAgeFailMs: duration().optional(),
  relayStaleMs: duration().optional(),
  queueBacklogWarn: positive.optional(),
  failureWindowMs: duration(1_000).optional(),
  failingMinCount: positive.optional(),
  overdueRetryWarnMs: duration().optional(),
  overdueRetryFailMs: duration().optional(),
});

/**
 * The whole file: `database` (one) or `databases` (several, by name), and optional sections.
 * Unknown keys are refused.
 */
export const configSchema = z
  .strictObject({
    database: databaseSchema.optional(),
    databases: databasesSchema.optional(),
    transport: transport.optional(),
    relay: relay.default({ enabled: true }),
    replayer: replayer.default({ enabled: false, ratePerSecond: 100 }),
    console: consoleSection.default({
      enabled: false,
      host: '127.0.0.1',
      port: 8080,
      basePath: '/',
      trustProxy: false,
      allowedOrigins: [],
      allowEdit: false,
      tokens: [],
      inboxWindowMs: 7 * 86_400_000,
    }),
    doctor: doctor.default({ retryStrategy: 'dead-letter-table' }),
  })
  .check(databaseRules);

export type SuretyConfig = z.output<typeof configSchema>;
export type SuretyConfigInput = z.input<typeof configSchema>;
export type TokenConfig = SuretyConfig['console']['tokens'][number];
