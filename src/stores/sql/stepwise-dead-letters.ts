import type { FailureRecord, RetryDecision } from '../../ports/consumer-store.js';
import { insertDeadLetterEvents } from './admin-sql.js';
import type { TableNames } from './naming.js';
import type { SqlDialect, Statement } from './sql-dialect.js';

// MySQL and SQLite have no data-modifying CTE: a dead letter's change and its history row are
// separate statements in one transaction. PostgreSQL writes both in one statement instead.

/**
 * A recorded failure's decision as two statements: `update` (the dialect's, applying it to the
 * counted row), then its `failed` or `dead` history row.
 */
export function stepwiseDecision(
  d: SqlDialect,
  t: TableNames,
  update: Statement,
  counted: { readonly id: number; readonly attempts: number },
  decision: RetryDecision,
  f: FailureRecord,
  error: string,
): Statement[] {
  const event = insertDeadLetterEvents(d, t, [
    {
      deadLetterId: counted.id,
      messageId: f.messageId,
      group: f.group,
      at: f.now,
      kind: decision.status === 'dead' ? 'dead' : 'failed',
      attempt: counted.attempts,
      detail: error,
      actor: null,
    },
  ]);
  return [update, event];
}
