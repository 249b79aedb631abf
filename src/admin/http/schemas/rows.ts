import { z } from '@hono/zod-openapi';
import { DEAD_LETTER_STATUSES, JOB_KINDS, OUTBOX_STATUSES } from '../../admin-schemas.js';

/** Response shapes for the OpenAPI document; they mirror the port's types (times are epoch milliseconds). */
const time = z.number().int().openapi({ description: 'epoch milliseconds', example: 1_738_324_800_000 });
const headers = z.record(z.string(), z.string());

export const outboxRowSchema = z
  .object({
    seq: z.number().int(),
    messageId: z.string(),
    type: z.string(),
    key: z.string(),
    topic: z.string(),
    orderingKey: z.string(),
    version: z.number().int(),
    headers,
    payload: z.string(),
    traceparent: z.string().nullable(),
    tracestate: z.string().nullable(),
    createdAt: time,
    status: z.enum(OUTBOX_STATUSES),
    attempts: z.number().int(),
    nextAttemptAt: time,
    claimedBy: z.string().nullable(),
    lastError: z.string().nullable(),
    sentAt: time.nullable(),
  })
  .openapi('OutboxRow');

export const outboxAttemptSchema = z
  .object({
    at: time,
    attempt: z.number().int(),
    outcome: z.enum(['failed', 'dead', 'resent']),
    error: z.string().nullable(),
    actor: z.string().nullable(),
    confirmedAt: time.nullable().openapi({
      description: 'For a resend: when the broker had confirmed the copy it replaced (null if none was)',
    }),
  })
  .openapi('OutboxAttempt');

export const outboxWithHistorySchema = outboxRowSchema
  .extend({ history: z.array(outboxAttemptSchema) })
  .openapi('OutboxRowWithHistory');

export const deadLetterRowSchema = z
  .object({
    id: z.number().int(),
    messageId: z.string(),
    group: z.string(),
    topic: z.string(),
    type: z.string(),
    key: z.string(),
    version: z.number().int(),
    headers,
    body: z.string(),
    bodyEncoding: z.enum(['utf8', 'base64']),
    status: z.enum(DEAD_LETTER_STATUSES),
    attempts: z.number().int(),
    nextRetryAt: time.nullable(),
    lastError: z.string(),
    poison: z.boolean(),
    ignoredReason: z.string().nullable(),
    claimedBy: z.string().nullable(),
    leaseUntil: time.nullable(),
    createdAt: time,
    updatedAt: time,
  })
  .openapi('DeadLetterRow');

export const deadLetterEventSchema = z
  .object({
    at: time,
    kind: z.enum(['failed', 'dead', 'replay_failed', 'resolved', 'replay_requested', 'ignored', 'edited']),
    attempt: z.number().int(),
    detail: z.string().nullable(),
    actor: z.string().nullable(),
  })
  .openapi('DeadLetterEvent');

export const deadLetterWithHistorySchema = deadLetterRowSchema
  .extend({ history: z.array(deadLetterEventSchema) })
  .openapi('DeadLetterRowWithHistory');

export const relaySchema = z
  .object({
    relayId: z.string(),
    host: z.string(),
    pid: z.number().int(),
    startedAt: time,
    lastClaimedAt: time.nullable(),
    lastSeenAt: time,
  })
  .openapi('RelayHeartbeat');

/** Which store a merged item came from. */
const storeName = z.string().openapi({ description: 'the store the item came from', example: 'billing' });

/** A store left out of a merged answer because it failed or did not answer in time. */
export const unavailableSchema = z
  .object({
    store: z.string(),
    error: z.string().openapi({ example: 'the database did not answer' }),
  })
  .openapi('StoreUnavailable');

export const lineageSchema = z
  .object({
    messageId: z.string(),
    outbox: outboxWithHistorySchema
      .extend({ store: storeName })
      .nullable()
      .openapi({ description: 'from the first store (in display order) that has the row' }),
    inbox: z.array(z.object({ group: z.string(), recordedAt: time, store: storeName })),
    deadLetters: z.array(deadLetterWithHistorySchema.extend({ store: storeName })),
    unavailable: z.array(unavailableSchema).openapi({ description: 'stores that could not be asked' }),
  })
  .openapi('Lineage');

const overviewShape = <S extends z.ZodRawShape>(item: S) =>
  z.object({
    outbox: z.object({
      pending: z.number().int(),
      sent: z.number().int(),
      dead: z.number().int(),
      oldestPendingAt: time.nullable(),
    }),
    deadLetters: z.record(z.enum(DEAD_LETTER_STATUSES), z.number().int()),
    expiredLeases: z
      .number()
      .int()
      .openapi({ description: 'rows left replaying by a replayer whose lease expired; counted as pending' }),
    dueRetries: z
      .array(
        z
          .object({
            group: z.string(),
            count: z.number().int(),
            expiredLeases: z.number().int(),
            oldestDueAt: time,
          })
          .extend(item),
      )
      .openapi({ description: 'dead letters due for a retry now, by consumer group, longest waiting first' }),
    inboxSize: z.number().int(),
    inboxSizeExact: z
      .boolean()
      .openapi({ description: 'false when inboxSize is a lower bound (the count was capped)' }),
    throughput: z.array(z.object({ minute: time, sent: z.number().int(), consumed: z.number().int() })),
    deadLetterGroups: z.array(
      z
        .object({
          type: z.string(),
          group: z.string(),
          error: z.string(),
          count: z.number().int(),
          oldestAt: time,
        })
        .extend(item),
    ),
    relays: z.array(relaySchema.extend(item)).openapi({ description: 'relays that have not stopped' }),
    stoppedRelays: z
      .array(relaySchema.extend({ stoppedAt: time }).extend(item))
      .openapi({ description: 'the last relays that stopped gracefully, the latest first' }),
  });

/** One store's overview, as its store computes it. */
export const storeOverviewSchema = overviewShape({}).openapi('StoreOverview');

export const overviewSchema = overviewShape({ store: storeName })
  .extend({
    stores: z.array(z.object({ name: z.string(), overview: storeOverviewSchema })).openapi({
      description: 'each store that answered, in display order',
    }),
    unavailable: z.array(unavailableSchema).openapi({ description: 'stores left out of the sums' }),
  })
  .openapi('Overview');

export const storeListSchema = z
  .object({
    stores: z.array(
      z.object({
        name: z.string().openapi({ example: 'orders' }),
        dialect: z.string().openapi({ example: 'postgres' }),
        default: z.boolean().openapi({ description: 'used when a request names no store' }),
      }),
    ),
  })
  .openapi('StoreList');

export const auditEntrySchema = z
  .object({
    id: z.number().int(),
    at: time,
    actor: z.string(),
    role: z.string(),
    action: z.string().openapi({ example: 'dlq.replay' }),
    target: z.string().openapi({ example: 'dlq:42' }),
    reason: z.string().nullable(),
    outcome: z.enum(['ok', 'refused', 'failed', 'noop']),
    detail: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi('AuditEntry');

export const jobSchema = z
  .object({
    id: z.number().int(),
    kind: z.enum(JOB_KINDS),
    filter: z
      .object({
        status: z.array(z.string()).readonly().optional(),
        type: z.string().optional(),
        key: z.string().optional(),
        topic: z.string().optional(),
        group: z.string().optional(),
        error: z.string().optional(),
        poison: z.boolean().optional(),
        from: time.optional(),
        to: time.optional(),
      })
      .openapi('JobFilter'),
    reason: z.string().nullable(),
    actor: z.string(),
    status: z.enum(['running', 'done', 'failed', 'cancelled']),
    total: z.number().int(),
    done: z.number().int().openapi({ description: 'rows examined so far' }),
    changed: z.number().int().openapi({ description: 'rows actually changed' }),
    cursor: z.number().int(),
    maxId: z.number().int(),
    ratePerSecond: z.number(),
    owner: z.string().nullable(),
    leaseUntil: time.nullable(),
    createdAt: time,
    updatedAt: time,
    error: z.string().nullable(),
  })
  .openapi('AdminJob');
