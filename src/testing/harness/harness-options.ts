import { z } from 'zod';
import { integerIn, booleanOption, recordOption } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import { isLogger, type Logger } from '../../core/logger.js';
import type { Store } from '../../ports/store.js';
import type { RelayOptions } from '../../producer/relay-options.js';
import type { ReplayJobOptions } from '../../consumer/replay-job.js';

/** Options of {@link createTestHarness}. */
export interface TestHarnessOptions {
  /**
   * Your own Surety store (e.g. `await createPostgresStore(...)`, migrated). Default: a private
   * SQLite database in memory, migrated, closed with the harness. A store you give stays open.
   */
  store?: Store;
  /** Where the harness clock starts (epoch ms). Default: the current time. */
  startAt?: number;
  /**
   * How long settled() waits by default before it throws what is outstanding. Default 4,000 ms: under
   * the 5 s test timeout of Vitest and Jest, so a test that does not settle fails with that list.
   */
  settleTimeoutMs?: number;
  /**
   * The relay's options, but its store, publisher, outbox and clock. The harness's defaults:
   * `pollIntervalMs: 50` and `backoff.jitter: 0` (a failed publish is due again exactly 1 s, 2 s, 4 s... of harness time later).
   */
  relay?: Omit<RelayOptions, 'store' | 'publisher' | 'outbox' | 'clock'>;
  /** Options of the replay job each consumer gets (default `intervalMs: 25`), or false for none. */
  replay?: ReplayJobOptions | false;
  /** An ordered outbox and relay (see OutboxOptions.ordered). Default false. */
  ordered?: boolean;
  /** Where the relay, consumers and log report. Default: nothing is logged (`null`). */
  logger?: Logger | null;
}

const schema = z.object(
  {
    store: z
      .custom<Store>(
        (s) =>
          ['outbox', 'inbox', 'deadLetters', 'admin'].every(
            (k) => typeof (s as Record<string, unknown> | null)?.[k] === 'object',
          ),
        'must be a Surety store (outbox, inbox, deadLetters and admin concerns)',
      )
      .optional(),
    startAt: integerIn(0).optional(),
    settleTimeoutMs: integerIn(1, 3_600_000).default(4_000),
    relay: recordOption().default({}),
    replay: z.union([z.literal(false), recordOption()], { error: 'must be false or replay job options' }).default({}),
    ordered: booleanOption().default(false),
    logger: z.custom<Logger>(isLogger, 'must be a logger with debug, info, warn and error methods').nullish(),
  },
  { error: 'must be an object' },
);

export type ResolvedHarnessOptions = Readonly<z.output<typeof schema>>;

/** Sets defaults and validates, once; the relay, consumers and replay jobs validate their own options. */
export function parseHarnessOptions(options: TestHarnessOptions | undefined): ResolvedHarnessOptions {
  return parseOptions(schema, options, 'harness');
}
