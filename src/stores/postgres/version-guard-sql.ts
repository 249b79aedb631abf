import type { TableNames } from '../sql/naming.js';
import type { VersionGuardStatements } from '../sql/version-guards.js';
import { statementName } from './executor.js';

/** PostgreSQL statements of the version guards, one named function each. */

/**
 * $1 group, $2 scope, $3 key, $4 version. One row (rowCount 1) when it inserted or raised the guard,
 * none when the guard was as high already. In READ COMMITTED a conflict with a row another
 * transaction is writing waits for it and then compares with what committed; the row is locked
 * either way ("all rows will be locked when the ON CONFLICT DO UPDATE action is taken").
 */
export const raiseVersion = (
  t: TableNames,
) => `INSERT INTO ${t.versionGuards} AS g (group_name, scope, msg_key, version)
VALUES ($1, $2, $3, $4)
ON CONFLICT (group_name, scope, msg_key) DO UPDATE SET version = EXCLUDED.version
WHERE g.version < EXCLUDED.version`;

/** $1 group, $2 scope, $3 key. */
export const selectVersion = (t: TableNames) =>
  `SELECT version FROM ${t.versionGuards} WHERE group_name = $1 AND scope = $2 AND msg_key = $3`;

/** The version-guard statements the shared concern runs; the raise is prepared once per connection. */
export function versionGuardStatements(t: TableNames): VersionGuardStatements {
  const raise = raiseVersion(t);
  return {
    raise: (g, version) => ({
      write: { text: raise, values: [g.group, g.scope, g.key, version], name: statementName(raise) },
    }),
    selectVersion: (g) => ({ text: selectVersion(t), values: [g.group, g.scope, g.key] }),
  };
}
