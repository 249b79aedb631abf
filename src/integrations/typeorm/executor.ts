import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { SqlExecutor, SqlResult } from '../../ports/sql-executor.js';
import { toSqlResult } from '../../stores/mysql/executor.js';
import { ormExecutor, sqlResult, type OrmExecutor } from '../shared/orm-executor.js';
import { bindTransaction, transactionOf } from '../shared/transaction-binding.js';

/** Surety's dialect name for a TypeORM data source's driver. */
export function typeormDialect(source: DataSource | EntityManager): 'postgres' | 'mysql' | 'sqlite' {
  const type = ('connection' in source ? source.connection : source).options.type;
  if (type === 'postgres' || type === 'cockroachdb') return 'postgres';
  if (type === 'mysql' || type === 'mariadb') return 'mysql';
  return 'sqlite';
}

/** The query runner of a transaction's EntityManager: the connection its statements run on. */
export function queryRunnerOf(manager: EntityManager): QueryRunner {
  const runner = manager.queryRunner;
  if (!runner?.isTransactionActive) {
    throw new TypeError('TypeORM: give the EntityManager of a running transaction (dataSource.transaction(...))');
  }
  return runner;
}

/**
 * One executor per query runner and transaction: a runner may be reused for the next transaction
 * (SQLite's drivers share one), which must not inherit the last one's queue or deadlock state.
 */
const executors = new WeakMap<QueryRunner, OrmExecutor>();

/** The one executor of the transaction `manager` runs in: Surety's SQL through `queryRunner.query`. */
export function executorForTypeorm(manager: EntityManager): OrmExecutor {
  const runner = queryRunnerOf(manager);
  let tx = executors.get(runner);
  if (!tx) {
    const dialect = typeormDialect(manager);
    tx = bindTransaction(
      ormExecutor(async (sql, values) => {
        try {
          return typeormResult(dialect, await runner.query(sql, [...values], true));
        } catch (err) {
          // The driver's error, as the raw executors give it: its SQLSTATE or errno is what Surety reads.
          throw (err as { driverError?: unknown }).driverError ?? err;
        }
      }),
      runner.manager,
    );
    executors.set(runner, tx);
  }
  return tx;
}

/** Forgets the executor of `runner`'s transaction once it committed or rolled back. */
export function endTransaction(runner: QueryRunner): void {
  executors.delete(runner);
}

/** TypeORM's structured result: `records` and `affected`; on MySQL the driver's own `raw` header. */
function typeormResult(dialect: string, res: { records?: unknown[]; affected?: number; raw?: unknown }): SqlResult {
  if (dialect === 'mysql') return toSqlResult(res.raw);
  return sqlResult(res.records, res.affected);
}

/**
 * The EntityManager of the transaction a consumer's handler runs in, from its context's `tx`: its
 * writes commit together with the inbox record.
 * @example
 * consumer.on('order.created', async (order: Order, ctx) => {
 *   await typeormTransactionOf(ctx.tx).insert('invoices', { orderId: order.id });
 * });
 */
export function typeormTransactionOf(tx: SqlExecutor): EntityManager {
  return transactionOf<EntityManager>('TypeORM', tx);
}
