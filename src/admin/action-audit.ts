import { describeError, StoreError, SuretyError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Actor, AdminStore, AuditEntry, NewAuditEntry } from '../ports/admin-store.js';
import { AdminError, ForbiddenError } from './admin-errors.js';

export interface ActionResult {
  /** True when a row changed. */
  readonly changed: boolean;
  /** Things the operator should know, e.g. that the handler may run again. */
  readonly warnings: string[];
}

export interface ActionSpec {
  readonly actor: Actor;
  /** `dlq.replay`, `dlq.ignore`, `dlq.edit`, `outbox.resend`, `job.create`, `job.cancel`. */
  readonly action: string;
  readonly target: string;
  readonly reason: string | null;
  readonly now: number;
}

/**
 * Builds the action's `ok` audit entry, which the work hands to the store so that it is inserted in
 * the action's own transaction. Warnings are kept in the detail; `target` replaces the spec's once
 * the action knows it (a new job's id).
 */
export type OkEntry = (
  detail: Record<string, unknown> | null,
  warnings?: readonly string[],
  target?: string,
) => NewAuditEntry;

/**
 * Runs an operator action. Its `ok` entry is written by the store with the change (see
 * {@link OkEntry}); every other outcome is written here: `refused` for a role or a disabled feature,
 * `noop` when the row's state (or absence) did not allow it, `failed` on an error. A failure's entry
 * holds a stable code and a generic message only, since viewers read the audit; the log has the error.
 * @example
 * await auditedAction(store.admin, logger, spec, async (ok) => {
 *   if (!(await store.admin.requestReplay(7, { actor: 'alice', now, audit: ok({ group: 'billing' }) }))) throw conflict;
 *   return { changed: true, warnings: [] };
 * });
 */
export async function auditedAction<R extends ActionResult>(
  store: Pick<AdminStore, 'appendAudit'>,
  logger: Logger,
  spec: ActionSpec,
  work: (ok: OkEntry) => Promise<R>,
): Promise<R> {
  const entry = (outcome: AuditEntry['outcome'], detail: Record<string, unknown> | null, target = spec.target) => ({
    at: spec.now,
    actor: spec.actor.name,
    role: spec.actor.role,
    action: spec.action,
    target,
    reason: spec.reason,
    outcome,
    detail,
  });
  const write = async (outcome: AuditEntry['outcome'], detail: Record<string, unknown>) => {
    try {
      await store.appendAudit(entry(outcome, detail));
    } catch (err) {
      logger.error(
        { action: spec.action, target: spec.target, outcome, err: describeError(err) },
        'audit entry not written',
      );
    }
  };
  if (spec.actor.role !== 'operator') {
    await write('refused', { code: 'SURETY_FORBIDDEN', error: 'role' });
    throw new ForbiddenError(`"${spec.action}" needs the operator role; "${spec.actor.name}" is a ${spec.actor.role}`);
  }
  let target = spec.target;
  const ok: OkEntry = (detail, warnings = [], newTarget) => {
    if (newTarget) target = newTarget;
    const all = { ...detail, ...(warnings.length ? { warnings: [...warnings] } : {}) };
    return entry('ok', Object.keys(all).length ? all : null, target);
  };
  let result: R;
  try {
    result = await work(ok);
  } catch (err) {
    if (err instanceof AdminError) {
      await write(err.code === 'SURETY_FORBIDDEN' ? 'refused' : 'noop', { code: err.code, error: err.message });
    } else {
      logger.error(
        { actor: spec.actor.name, action: spec.action, target: spec.target, err: describeError(err) },
        'admin action failed',
      );
      await write('failed', failureDetail(err));
    }
    throw err;
  }
  logger.info({ actor: spec.actor.name, action: spec.action, target }, 'admin action');
  return result;
}

/** What the audit keeps of an unexpected error: its stable code and a message that reveals nothing internal. */
export function failureDetail(err: unknown): { code: string; error: string } {
  if (err instanceof StoreError) return { code: err.code, error: 'the database failed; see the server log' };
  const code = err instanceof SuretyError ? err.code : 'SURETY_INTERNAL_ERROR';
  return { code, error: 'internal error; see the server log' };
}
