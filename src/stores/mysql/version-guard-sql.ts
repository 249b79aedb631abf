import { randomUUID } from 'node:crypto';
import type { TableNames } from '../sql/naming.js';
import type { VersionGuardStatements } from '../sql/version-guards.js';

/** MySQL/MariaDB statements of the version guards, one named function each. Placeholders are `?`, in text order. */

/**
 * ? group, ? scope, ? key, ? version, ? token, then ? version, ? token, ? version again. A duplicate
 * key takes the row's exclusive lock, waiting for a transaction that is writing it, and compares
 * with the latest committed version (InnoDB's locking read), whatever the isolation level.
 * raised_by is assigned first, from the old version: correct left to right and with MariaDB's
 * SIMULTANEOUS_ASSIGNMENT alike.
 */
export const raiseVersion = (
  t: TableNames,
) => `INSERT INTO ${t.versionGuards} (group_name, scope, msg_key, version, raised_by)
VALUES (?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE raised_by = IF(version < ?, ?, raised_by), version = GREATEST(version, ?)`;

/** ? group, ? scope, ? key. The transaction sees its own raise (even in a REPEATABLE READ snapshot). */
export const selectRaisedBy = (t: TableNames) =>
  `SELECT raised_by FROM ${t.versionGuards} WHERE group_name = ? AND scope = ? AND msg_key = ?`;

/** ? group, ? scope, ? key. */
export const selectVersion = (t: TableNames) =>
  `SELECT version FROM ${t.versionGuards} WHERE group_name = ? AND scope = ? AND msg_key = ?`;

/**
 * The version-guard statements the shared concern runs: the upsert, then a read of the token it
 * left, since the affected-rows count cannot tell an inserted row from an untouched one under the
 * FOUND_ROWS flag, and a caller's pool may set either.
 */
export function versionGuardStatements(t: TableNames): VersionGuardStatements {
  return {
    raise: (g, version) => {
      const token = randomUUID();
      const key = [g.group, g.scope, g.key];
      return {
        write: { text: raiseVersion(t), values: [...key, version, token, version, token, version] },
        readBack: { statement: { text: selectRaisedBy(t), values: key }, token },
      };
    },
    selectVersion: (g) => ({ text: selectVersion(t), values: [g.group, g.scope, g.key] }),
  };
}
