import type { WireMessage } from '../../core/wire.js';
import { inWriteTransaction, type SqliteDatabase, type SqliteStatement } from './driver.js';
import * as sql from './sql.js';

/** A row read from the log. */
export interface LogRow {
  readonly offset: number;
  readonly topic: string;
  readonly message: WireMessage;
}

/** A message to append. */
export interface LogAppend {
  readonly topic: string;
  readonly message: WireMessage;
}

interface RawRow {
  log_offset: number;
  message_id: string;
  headers: string;
  body: Buffer;
}

/** What a lease holder writes for one topic when it renews. */
export interface TopicProgress {
  /** The highest offset read (handed out or buffered); rows up to it are in flight. */
  readonly readOffset: number;
  /** The new checkpoint, when it can advance. */
  readonly commitOffset?: number | undefined;
}

export interface LeaseRow {
  readonly owner: string;
  readonly expiresAt: number;
}

/**
 * The log's SQL on one connection, as prepared statements. Every method is synchronous and every
 * write is its own short transaction.
 */
export class LogStore {
  private readonly statements: Record<
    Exclude<keyof typeof sql, 'logTables' | 'createSchema' | 'addLeaseReadOffset' | 'tableColumns'>,
    SqliteStatement
  >;

  constructor(
    private readonly db: SqliteDatabase,
    readonly tables: sql.LogTables,
  ) {
    inWriteTransaction(db, () => {
      db.exec(sql.createSchema(tables));
      const columns = db.prepare(sql.tableColumns()).all(tables.leases) as { name: string }[];
      if (!columns.some((c) => c.name === 'read_offset')) db.exec(sql.addLeaseReadOffset(tables));
    });
    this.statements = {
      appendMessage: db.prepare(sql.appendMessage(tables)),
      readAfter: db.prepare(sql.readAfter(tables)),
      readCheckpoint: db.prepare(sql.readCheckpoint(tables)),
      commitCheckpoint: db.prepare(sql.commitCheckpoint(tables)),
      readLease: db.prepare(sql.readLease(tables)),
      acquireLease: db.prepare(sql.acquireLease(tables)),
      renewLease: db.prepare(sql.renewLease(tables)),
      releaseLease: db.prepare(sql.releaseLease(tables)),
      purgeCommitted: db.prepare(sql.purgeCommitted(tables)),
    };
  }

  /** Appends all messages in one transaction (one fsync); returns their offsets. */
  append(batch: readonly LogAppend[], now: number): number[] {
    const insert = this.statements.appendMessage;
    return inWriteTransaction(this.db, () =>
      batch.map(({ topic, message }) => {
        const result = insert.run(topic, message.id, JSON.stringify(message.headers), message.body, now);
        return Number(result.lastInsertRowid);
      }),
    );
  }

  readAfter(topic: string, afterOffset: number, limit: number): LogRow[] {
    const rows = this.statements.readAfter.all(topic, afterOffset, limit) as RawRow[];
    return rows.map((row) => ({
      offset: row.log_offset,
      topic,
      message: { id: row.message_id, headers: parseHeaders(row.headers), body: row.body },
    }));
  }

  /** The group's committed offset on `topic`; 0 (the start of the log) when it has none. */
  committedOffset(group: string, topic: string): number {
    const row = this.statements.readCheckpoint.get(group, topic) as { committed_offset: number } | undefined;
    return row?.committed_offset ?? 0;
  }

  readLease(group: string, topic: string): LeaseRow | undefined {
    const row = this.statements.readLease.get(group, topic) as { owner: string; expires_at: number } | undefined;
    return row && { owner: row.owner, expiresAt: row.expires_at };
  }

  /** Takes the lease if it is free, expired or already ours. True when `owner` holds it. */
  acquireLease(group: string, topic: string, owner: string, now: number, ttlMs: number): boolean {
    return inWriteTransaction(
      this.db,
      () => this.statements.acquireLease.run(group, topic, owner, now + ttlMs, now).changes === 1,
    );
  }

  /**
   * Renews the leases of the given topics, records how far each was read and commits the offsets
   * that advanced, in one transaction. Returns the topics whose lease was lost (nothing of theirs
   * is written).
   */
  renewAndCommit(
    group: string,
    owner: string,
    topics: ReadonlyMap<string, TopicProgress>,
    now: number,
    ttlMs: number,
  ): string[] {
    const { renewLease, commitCheckpoint } = this.statements;
    return inWriteTransaction(this.db, () => {
      const lost: string[] = [];
      for (const [topic, progress] of topics) {
        if (renewLease.run(now + ttlMs, progress.readOffset, group, topic, owner).changes === 0) {
          lost.push(topic);
          continue;
        }
        if (progress.commitOffset !== undefined) commitCheckpoint.run(group, topic, progress.commitOffset, now);
      }
      return lost;
    });
  }

  releaseLease(group: string, topic: string, owner: string): void {
    inWriteTransaction(this.db, () => this.statements.releaseLease.run(group, topic, owner));
  }

  /** Deletes at most `limit` rows every group has committed past. Returns how many. */
  purgeCommitted(limit: number): number {
    return inWriteTransaction(this.db, () => this.statements.purgeCommitted.run(limit).changes);
  }
}

/** Our own writer always stores a JSON object; anything else was written by someone else. */
function parseHeaders(text: string): Record<string, string> {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, string>;
  } catch {
    // Fall through: an empty header set makes the consumer's decoder report the message as poison.
  }
  return {};
}
