import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { SuretyError } from '../../core/errors.js';
import { loadSqliteDriver, type SqliteDatabase } from './driver.js';
import type { EmbeddedTransportConfig } from './options.js';

/** An open connection to the log's database file. */
export interface OpenLog {
  readonly db: SqliteDatabase;
  /** True when the transport opened the connection and must close it. */
  readonly owned: boolean;
  /** Identifies this log within the process (file and table prefix), for in-process wake-ups. */
  readonly logKey: string;
  /** Absolute path of the database file, or `':memory:'`. */
  readonly location: string;
}

/**
 * Opens (or adopts) the connection and sets it up for a durable, multi-process log: WAL so readers
 * never block the writer, a busy timeout so writers queue instead of failing, and the configured
 * fsync level.
 */
export function openLog(config: EmbeddedTransportConfig): OpenLog {
  let db = config.database;
  const owned = db === undefined;
  try {
    db ??= new (loadSqliteDriver())(config.path!);
    db.pragma(`busy_timeout = ${config.busyTimeoutMs}`);
    if (!db.memory) {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal')
        config.logger.warn(
          { path: db.name, journalMode: mode },
          'could not switch the log to WAL; readers will block writers',
        );
    }
    db.pragma(`synchronous = ${config.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  } catch (err) {
    if (err instanceof SuretyError) throw err;
    if (owned) db?.close();
    throw new SuretyError('SURETY_CONNECTION_LOST', `could not open the embedded log at ${config.path ?? db?.name}`, {
      cause: err,
    });
  }
  const location = db.memory ? ':memory:' : realpathSync(db.name);
  const logKey = db.memory ? `memory:${randomUUID()}` : `${location}\u0000${config.tablePrefix}`;
  return { db, owned, logKey, location };
}
