import { resolve } from 'node:path';
import { z } from 'zod';
import { systemClock, type Clock } from '../../core/clock.js';
import { SuretyError } from '../../core/errors.js';
import { clockOption } from '../../core/option-schemas.js';
import { parseOptions } from '../../core/options.js';
import type { BrokerProbe, QueueState } from '../../ports/broker-probe.js';
import { loadSqliteDriver, type SqliteDatabase } from './driver.js';
import { TABLE_PREFIX } from './options.js';
import { knownPairs, topicStates, type ProbeScope } from './probe-sql.js';
import { embeddedQueueName, parseProbedQueue } from './probe-queue-name.js';
import { logTables, tableColumns, type LogTables } from './sql.js';

/** Options of {@link createEmbeddedQueueProbe}. */
export interface EmbeddedQueueProbeOptions {
  /** The log's file, as given to `createEmbeddedTransport`. */
  readonly path: string;
  /** Default `'surety_log_'`. */
  readonly tablePrefix?: string;
  /** Judges lease expiry; must agree with the transports' clock (wall time). */
  readonly clock?: Clock;
}

const optionsSchema = z.strictObject({
  path: z
    .string({ error: 'must be the path of the log file' })
    .min(1, { error: 'must be the path of the log file' })
    .refine((p) => p !== ':memory:', { error: 'must be a file: a ":memory:" log is private to its transport' }),
  tablePrefix: z
    .string()
    .regex(TABLE_PREFIX, { error: 'must be 1-41 letters, digits or _, not starting with a digit' })
    .default('surety_log_'),
  clock: clockOption(systemClock),
});

interface TopicStateRow {
  topic: string;
  owner: string | null;
  ready: number;
  unacked: number;
}

type Schema = 'missing' | 'without-read-offset' | 'complete';

/**
 * A read-only {@link BrokerProbe} for the embedded log, on a read-only connection of its own.
 *
 * A queue is a consumer group on a topic, named `<topic>@<group>` (see `embeddedQueueName`); a name
 * without `@` is a whole group, summed over the topics it has a checkpoint or lease on (like a
 * RabbitMQ queue, by default one per group). Per topic: `ready` counts rows after the group's
 * checkpoint that no live subscriber has read; `unacked` rows the live lease holder has read and not
 * committed, as of its last checkpoint or lease renewal (at most a third of `leaseTtlMs` old);
 * `consumers` the subscribers holding a live lease. Stand-by subscribers of a group, which take
 * over when the holder stops, are not counted: one subscriber per group and topic consumes at a time.
 * The log is always durable. A pair always exists (the log keeps every topic; a group starts at
 * its oldest row); a group the log has no record of does not. `listQueues` names every pair the log
 * has a checkpoint or lease for, as `<topic>@<group>`.
 * @example
 * const probe = createEmbeddedQueueProbe({ path: '.data/surety.sqlite' });
 * await probe.inspect('order.created@billing'); // { ready: 12, unacked: 0, consumers: 0, durable: true, ... }
 * await probe.listQueues(); // ['order.created@billing', 'order.created@shipping']
 * await probe.close();
 */
export function createEmbeddedQueueProbe(options: EmbeddedQueueProbeOptions): BrokerProbe {
  const config = parseOptions(optionsSchema, options, '');
  return new EmbeddedQueueProbe(config.path, logTables(config.tablePrefix), config.clock);
}

class EmbeddedQueueProbe implements BrokerProbe {
  readonly broker = 'embedded';
  readonly address: string;
  private db: SqliteDatabase | undefined;
  private schema: Schema = 'missing';
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly tables: LogTables,
    private readonly clock: Clock,
  ) {
    this.address = resolve(path);
  }

  async inspect(queue: string): Promise<QueueState> {
    const { group, topic } = parseProbedQueue(queue);
    const db = this.connect();
    const schema = this.readSchema(db);
    const rows = schema === 'missing' ? [] : this.topicStates(db, schema, group, topic);
    const exists = topic !== undefined || rows.length > 0;
    const sum = (pick: (row: TopicStateRow) => number) => rows.reduce((total, row) => total + pick(row), 0);
    return {
      name: queue,
      exists,
      ready: sum((r) => r.ready),
      unacked: schema === 'without-read-offset' ? null : sum((r) => r.unacked),
      // One holder may consume several topics of the group with one subscription.
      consumers: new Set(rows.flatMap((r) => (r.owner === null ? [] : [r.owner]))).size,
      durable: true,
      type: 'log',
      arguments: null,
      source: 'log',
    };
  }

  async listQueues(): Promise<string[]> {
    const db = this.connect();
    if (this.readSchema(db) === 'missing') return [];
    const pairs = db.prepare(knownPairs(this.tables)).all() as { group_name: string; topic: string }[];
    return pairs.map((p) => embeddedQueueName(p.topic, p.group_name));
  }

  async close(): Promise<void> {
    this.closed = true;
    const db = this.db;
    this.db = undefined;
    db?.close();
  }

  private topicStates(db: SqliteDatabase, schema: Schema, group: string, topic: string | undefined): TopicStateRow[] {
    const scope: ProbeScope = topic === undefined ? 'group' : 'topic';
    const params = { group, now: this.clock.now(), ...(topic === undefined ? {} : { topic }) };
    return db.prepare(topicStates(this.tables, scope, schema === 'complete')).all(params) as TopicStateRow[];
  }

  /** Tables appear when a transport first opens the file, and may be migrated later: checked until complete. */
  private readSchema(db: SqliteDatabase): Schema {
    if (this.schema === 'complete') return this.schema;
    const columns = (table: string) => (db.prepare(tableColumns()).all(table) as { name: string }[]).map((c) => c.name);
    const { log, checkpoints, leases } = this.tables;
    const leaseColumns = columns(leases);
    if (columns(log).length === 0 || columns(checkpoints).length === 0 || leaseColumns.length === 0)
      this.schema = 'missing';
    else this.schema = leaseColumns.includes('read_offset') ? 'complete' : 'without-read-offset';
    return this.schema;
  }

  /** Opened on first use; a log that cannot be opened is reported by `inspect` or `listQueues`, and tried again next time. */
  private connect(): SqliteDatabase {
    if (this.closed) throw new SuretyError('SURETY_TRANSPORT_CLOSED', 'the embedded queue probe is closed');
    if (this.db) return this.db;
    const Database = loadSqliteDriver();
    let db: SqliteDatabase | undefined;
    try {
      db = new Database(this.path, { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 5000');
    } catch (err) {
      db?.close();
      throw new SuretyError('SURETY_CONNECTION_LOST', `cannot open the embedded log at ${this.address}`, {
        cause: err,
      });
    }
    this.db = db;
    return db;
  }
}
