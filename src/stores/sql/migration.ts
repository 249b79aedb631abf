/**
 * One statement of a migration. Where the database cannot say IF NOT EXISTS (MySQL 8 indexes), the
 * step names the driver error meaning "already there", so a migration interrupted halfway can rerun.
 */
export type MigrationStep = string | { readonly sql: string; readonly alreadyApplied: (err: unknown) => boolean };

/** One schema version: statements applied once, in order. */
export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly up: readonly MigrationStep[];
}
