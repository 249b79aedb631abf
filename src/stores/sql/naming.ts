import { InvalidOptionError } from '../../core/errors.js';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,40}$/;

/** Validates a table prefix or schema name: plain identifiers only, so they can be spliced into SQL. */
export function checkIdentifier(option: string, value: string, allowEmpty = false): string {
  if (allowEmpty && value === '') return value;
  if (!IDENT.test(value)) {
    throw new InvalidOptionError(
      option,
      `must match ${IDENT.source} (letters, digits, underscore; at most 41 characters)`,
    );
  }
  return value;
}

/** Table names of one Surety installation. */
export interface TableNames {
  readonly outbox: string;
  /** The outbox rows not yet sent (pending or dead), narrow: the relay's queue (PostgreSQL). */
  readonly outboxPending: string;
  /** Outbox rows sent per minute, counted as they are marked (PostgreSQL). */
  readonly outboxSentMinutes: string;
  readonly outboxKeys: string;
  readonly leases: string;
  readonly migrations: string;
  readonly inbox: string;
  readonly deadLetters: string;
  /** Relay attempts that did not end in a confirm, and operators' resends. */
  readonly outboxAttempts: string;
  /** Every transition of a dead letter, with its actor. */
  readonly deadLetterEvents: string;
  /** One heartbeat row per running relay. */
  readonly relays: string;
  readonly audit: string;
  readonly adminJobs: string;
  /** The highest version each consumer group applied per (scope, key) (fetchBack). */
  readonly versionGuards: string;
}

export function tableNames(prefix: string, qualify: (name: string) => string): TableNames {
  return Object.freeze({
    outbox: qualify(`${prefix}outbox`),
    outboxPending: qualify(`${prefix}outbox_pending`),
    outboxSentMinutes: qualify(`${prefix}outbox_sent_minutes`),
    outboxKeys: qualify(`${prefix}outbox_keys`),
    leases: qualify(`${prefix}leases`),
    migrations: qualify(`${prefix}migrations`),
    inbox: qualify(`${prefix}inbox`),
    deadLetters: qualify(`${prefix}dead_letters`),
    outboxAttempts: qualify(`${prefix}outbox_attempts`),
    deadLetterEvents: qualify(`${prefix}dead_letter_events`),
    relays: qualify(`${prefix}relays`),
    audit: qualify(`${prefix}audit`),
    adminJobs: qualify(`${prefix}admin_jobs`),
    versionGuards: qualify(`${prefix}version_guards`),
  });
}
