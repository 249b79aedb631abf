import { createHash } from 'node:crypto';
import { TransactionAbortedError } from '../../core/errors.js';
import { AsyncMutex } from '../sql/async-mutex.js';
import { abortedOr } from './errors.js';
import type { QueryHints, SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { runScoped } from '../../core/scoped-work.js';

/** The part of a pg `Client`, `PoolClient` or `Pool` Surety needs (declared here, not imported from pg). */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null; command?: string }>;
}

/** The socket under a pg client, which Node can hold writes on (cork) and send together (uncork). */
interface Corkable {
  cork?(): void;
  uncork?(): void;
}

/** pg's query-config form, which prepares a named statement once per connection. */
export interface PgPreparing {
  query(config: {
    name: string;
    text: string;
    values?: unknown[];
  }): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}

const names = new Map<string, string>();

/** A stable prepared-statement name for one of Surety's statement texts. */
export function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `surety_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    names.set(text, name);
  }
  return name;
}

/** A client checked out of the pool; pg emits `error` on it when its connection dies while held. */
export interface PgPoolClient extends PgQueryable {
  release(err?: Error | boolean): void;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  off?(event: 'error', listener: (err: Error) => void): unknown;
}

export interface PgPoolLike extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
}

/** Whether `client` was created with pg's `pipeline: true`: queries issued at once go out unanswered. */
export function isPipelined(client: PgQueryable): boolean {
  return (client as { pipeline?: unknown }).pipeline === true;
}

/**
 * Wraps a pg client that has an open transaction. Statements issued at once (handlers running
 * concurrently in one transaction) are pipelined on a client created with `pipeline: true`, and
 * otherwise sent one after another: pg deprecates queueing on a busy client.
 * @example
 * const client = await pool.connect();
 * await client.query('BEGIN');
 * await outbox.add(pgExecutor(client), { type: 'order.created', key: order.id, payload: order });
 * await pgCommit(client); // not client.query('COMMIT'): see pgCommit
 */
export function pgExecutor(client: PgQueryable): SqlExecutor {
  return inOrder(client).tx;
}

/**
 * The executor of a client, and a way to send COMMIT or ROLLBACK after every statement issued on it
 * so far: on a plain client statements wait their turn in a queue, which a direct `client.query`
 * would overtake; on a pipelined one they are already on the wire, in order.
 */
function inOrder(client: PgQueryable): { tx: SqlExecutor; control: PgQueryable } {
  const run = async <R>(sql: string, values?: readonly unknown[], hints?: QueryHints): Promise<SqlResult<R>> => {
    try {
      const res = hints?.name
        ? await (client as unknown as PgPreparing).query({
            name: hints.name,
            text: sql,
            values: values as unknown[] | undefined,
          })
        : await client.query(sql, values as unknown[] | undefined);
      return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
    } catch (err) {
      throw abortedOr(err);
    }
  };
  if (isPipelined(client)) {
    // pg writes each query with its own syscall; statements issued in one turn go out in one write.
    const stream = (client as { connection?: { stream?: Corkable } }).connection?.stream;
    if (!stream?.cork || !stream.uncork) return { tx: { query: run }, control: client };
    let corked = false;
    const tx: SqlExecutor = {
      query: (sql, values, hints) => {
        if (!corked) {
          corked = true;
          stream.cork!();
          process.nextTick(() => {
            corked = false;
            stream.uncork!();
          });
        }
        return run(sql, values, hints);
      },
    };
    return { tx, control: client };
  }
  const queue = new AsyncMutex();
  return {
    tx: { query: (sql, values, hints) => queue.run(() => run(sql, values, hints)) },
    control: { query: (text, values) => queue.run(() => client.query(text, values)) },
  };
}

/**
 * A pool client held across awaits. pg emits `error` on a checked-out client whose connection dies
 * (server restart, idle timeout, terminated backend), even mid-statement; unheard, that event would
 * crash the process. It is heard from checkout until the client is back in the pool, and a client
 * released after an error is discarded rather than reused.
 */
export class HeldClient {
  private readonly onError = () => undefined; // the statement in progress (or the next one) fails and says why

  private constructor(readonly client: PgPoolClient) {
    client.on?.('error', this.onError);
  }

  static async from(pool: PgPoolLike): Promise<HeldClient> {
    return new HeldClient(await pool.connect());
  }

  release(err?: unknown): void {
    this.client.release(err === undefined ? undefined : err instanceof Error ? err : true);
    this.client.off?.('error', this.onError);
  }
}

/**
 * COMMIT that refuses PostgreSQL's silent rollback: once a statement of the transaction has failed,
 * the server answers COMMIT with ROLLBACK and no error, even when the caller caught that statement's
 * error and carried on. Treating that answer as a commit would ack or report work that was undone.
 */
export async function pgCommit(client: PgQueryable): Promise<void> {
  const res = await client.query('COMMIT');
  if (res.command === 'ROLLBACK') {
    throw new TransactionAbortedError(
      'PostgreSQL rolled the transaction back at COMMIT: a statement in it failed and its error was caught, so nothing of it was written (use a SAVEPOINT to survive a failing statement)',
    );
  }
}

/** Runs `work` in a transaction on a connection from `pool`; commits, or rolls back and rethrows. */
export async function pgTransaction<T>(pool: PgPoolLike, work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  const held = await HeldClient.from(pool);
  const { client } = held;
  // COMMIT and ROLLBACK follow every statement issued before `work` settled; later ones are refused.
  const { tx, control } = inOrder(client);
  try {
    await client.query('BEGIN');
    const result = await runScoped(tx, work);
    await pgCommit(control);
    held.release();
    return result;
  } catch (err) {
    const rolledBack = await control.query('ROLLBACK').then(
      () => true,
      () => false,
    );
    held.release(rolledBack ? undefined : err); // a connection that cannot even roll back is not reused
    throw err;
  }
}
