import type { TableNames } from '../sql/naming.js';
import type { VersionGuardStatements } from '../sql/version-guards.js';

/** SQLite statements of the version guards, one named function each. Placeholders are `?`, in text order. */

/**
 * ? group, ? scope, ? key, ? version. One change when it inserted or raised the guard, none when the
 * guard was as high already. Writers are serialised (BEGIN IMMEDIATE), so it reads what committed.
 */
export const raiseVersion = (t: TableNames) => `INSERT INTO ${t.versionGuards} (group_name, scope, msg_key, version)
VALUES (?, ?, ?, ?)
ON CONFLICT (group_name, scope, msg_key) DO UPDATE SET version = excluded.version
WHERE version < excluded.version`;

/** ? group, ? scope, ? key. */
export const selectVersion = (t: TableNames) =>
  `SELECT version FROM ${t.versionGuards} WHERE group_name = ? AND scope = ? AND msg_key = ?`;

/** The version-guard statements the shared concern runs. */
export function versionGuardStatements(t: TableNames): VersionGuardStatements {
  return {
    raise: (g, version) => ({ write: { text: raiseVersion(t), values: [g.group, g.scope, g.key, version] } }),
    selectVersion: (g) => ({ text: selectVersion(t), values: [g.group, g.scope, g.key] }),
  };
}
