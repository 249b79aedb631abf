import type { SqlExecutor } from '../../src/ports/sql-executor.js';
import type { OpenTransaction } from '../conformance/outbox-store-suite.js';

/**
 * A transaction of `run` held open until the test commits or rolls it
 * back, as an application holds one across awaits.
 */
export async function holdOpen(
  run: (work: (tx: SqlExecutor) => Promise<void>) => Promise<void>,
): Promise<OpenTransaction> {
  let decide!: (commit: boolean) => void;
  const decision = new Promise<boolean>((resolve) => (decide = resolve));
  let opened!: (tx: SqlExecutor) => void;
  const ready = new Promise<SqlExecutor>((resolve) => (opened = resolve));
  const rolledBack = new Error('rolled back by the fixture');
  const done = run(async (tx) => {
    opened(tx);
    if (!(await decision)) throw rolledBack;
  });
  const tx = await Promise.race([ready, done.then(() => ready)]);
  return {
    tx,
    async commit() {
      decide(true);
      await done;
    },
    async rollback() {
      decide(false);
      await done.catch((err: unknown) => {
        if (err !== rolledBack) throw err;
      });
    },
  };
}
