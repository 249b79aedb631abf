import { z } from 'zod';
import { booleanOption, listOf, nonEmptyString, recordOption } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import type { OutboxOptions } from '../../producer/outbox.js';
import type { RelayOptions } from '../../producer/relay-options.js';
import type { ConsumerOptions } from '../../consumer/consumer-options.js';
import type { ReplayJobOptions } from '../../consumer/replay-job.js';
import type { Store } from '../../ports/store.js';
import type { Transport } from '../../ports/transport.js';

/**
 * An instance, which stays yours to close, or a function that creates one, which the module then
 * owns: it closes it at shutdown.
 */
export type Source<T> = T | (() => T | Promise<T>);

/** A consumer group's options, without the store and transport the module gives it. */
export interface SuretyConsumerConfig extends Omit<ConsumerOptions, 'store' | 'transport'> {
  /** Its replay job's options; `false` runs none. Default: a replay job with its defaults. */
  readonly replay?: ReplayJobOptions | false;
}

export interface SuretyModuleOptions {
  /** e.g. `() => createPostgresStore({ connectionString })`. */
  readonly store: Source<Store & { close(): Promise<void> }>;
  /** e.g. `() => createRabbitMqTransport({ url, topology })`. */
  readonly transport: Source<Transport & { close(): Promise<void> }>;
  /** Run the store's (idempotent) migrations at application bootstrap, before anything starts. Default false. */
  readonly migrate?: boolean;
  readonly outbox?: Omit<OutboxOptions, 'store'>;
  /** The relay's options; `false` runs no relay in this application (a consumer-only service). */
  readonly relay?: Omit<RelayOptions, 'store' | 'publisher' | 'outbox'> | false;
  /** One consumer per group; `@SuretyHandler` methods are registered on the one their `group` names. */
  readonly consumers?: readonly SuretyConsumerConfig[];
}

const hasMethods = (value: unknown, names: readonly string[]) =>
  typeof value === 'object' && value !== null && names.every((n) => typeof (value as never)[n] === 'function');

const source = (what: string, example: string, methods: readonly string[]) =>
  z.custom<unknown>(
    (v) => typeof v === 'function' || hasMethods(v, methods),
    `must be a ${what} or a function that returns one, e.g. ${example}`,
  );

const schema = z.strictObject({
  store: source('Store', '() => createPostgresStore({ connectionString })', ['transaction', 'migrate', 'close']),
  transport: source('Transport', '() => createRabbitMqTransport({ url })', ['publish', 'subscribe', 'close']),
  migrate: booleanOption().default(false),
  outbox: recordOption().default({}),
  relay: z.union([z.literal(false), recordOption()], { error: 'must be false or the relay options' }).default({}),
  consumers: listOf(
    z.looseObject({
      group: nonEmptyString(),
      replay: z
        .union([z.literal(false), recordOption()], { error: 'must be false or the replay job options' })
        .default({}),
    }),
  )
    .default([])
    .superRefine((consumers, ctx) => {
      const seen = new Set<string>();
      consumers.forEach((c, i) => {
        if (seen.has(c.group))
          ctx.addIssue({ code: 'custom', path: [i, 'group'], message: `"${c.group}" is configured twice` });
        seen.add(c.group);
      });
    }),
});

export type ResolvedSuretyModuleOptions = Readonly<z.output<typeof schema>>;

/** Checks the module's own shape once; each component then validates its own options as it is built. */
export function parseModuleOptions(input: unknown): ResolvedSuretyModuleOptions {
  return parseOptions(schema, input, 'SuretyModule');
}
