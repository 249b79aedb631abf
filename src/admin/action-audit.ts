import { describeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Actor, AdminStore, AuditEntry } from '../ports/admin-store.js';
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

export interface ActionOutcome<R extends ActionResult> {
  readonly result: R;
  /** Replaces the target once the action knows it (a new job's id). */
  readonly target?: string;
  readonly detail?: Record<string, unknown>;
}

/**
 * Runs an operator action and writes its audit entry whatever happens: `refused` for a role or a
 * disabled feature, `noop` when the row's state (or absence) did not allow it, `failed` on an error.
 */
export async function auditedAction<R extends ActionResult>(
  store: Pick<AdminStore, 'appendAudit'>,
  logger: Logger,
  spec: ActionSpec,
  work: () => Promise<ActionOutcome<R>>,
): Promise<R> {
  const write = async (outcome: AuditEntry['outcome'], target: string, detail: Record<string, unknown> | null) => {
    try {
      await store.appendAudit({
        at: spec.now,
        actor: spec.actor.name,
        role: spec.actor.role,
        action: spec.action,
        target,
        reason: spec.reason,
        outcome,
        detail,
      });
      return true;
    } catch (err) {
      logger.error({ action: spec.action, target, outcome, err: describeError(err) }, 'audit entry not written');
      return false;
    }
  };
  if (spec.actor.role !== 'operator') {
    await write('refused', spec.target, { error: 'role' });
    throw new ForbiddenError(`"${spec.action}" needs the operator role; "${spec.actor.name}" is a ${spec.actor.role}`);
  }
  let done: ActionOutcome<R>;
  try {
    done = await work();
  } catch (err) {
    if (err instanceof AdminError) {
      const outcome = err.code === 'SURETY_FORBIDDEN' ? 'refused' : 'noop';
      await write(outcome, spec.target, { code: err.code, error: err.message });
    } else {
      await write('failed', spec.target, { error: describeError(err) });
    }
    throw err;
  }
  const detail = { ...done.detail, ...(done.result.warnings.length ? { warnings: done.result.warnings } : {}) };
  const written = await write('ok', done.target ?? spec.target, Object.keys(detail).length ? detail : null);
  if (!written) {
    return {
      ...done.result,
      warnings: [...done.result.warnings, 'the action was done but its audit entry could not be written'],
    };
  }
  logger.info({ actor: spec.actor.name, action: spec.action, target: done.target ?? spec.target }, 'admin action');
  return done.result;
}
