import { insertDeadLetterEvents } from './admin-sql.js';
import type { DeadLetterStatements } from './dead-letters.js';
import type { TableNames } from './naming.js';
import type { SqlDialect } from './sql-dialect.js';

// MySQL and SQLite have no data-modifying CTE: a dead letter's change and its history row are
// separate statements in one transaction. PostgreSQL writes both in one statement instead.

/**
 * A recorded failure's decision as two statements: `update` (? status, ? next retry at, ? now, ? id,
 * the dialect's, applying it to the counted row), then its `failed` or `dead` history row.
 */
export function stepwiseDecision(d: SqlDialect, t: TableNames, update: string): DeadLetterStatements['applyDecision'] {
  return (id, attempts, decision, f, error) => {
    const event = insertDeadLetterEvents(d, t, [
      {
        deadLetterId: id,
        messageId: f.messageId,
        group: f.group,
        at: f.now,
        kind: decision.status === 'dead' ? 'dead' : 'failed',
        attempt: attempts,
        detail: error,
        actor: null,
      },
    ]);
    return [{ text: update, values: [decision.status, decision.nextRetryAt, f.now, id] }, event];
  };
}
