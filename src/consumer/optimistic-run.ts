import type { SqlExecutor } from '../ports/sql-executor.js';
import type { ResolvedConsumerOptions } from './consumer-options.js';
import type { BatchHandler, Resolved } from './handler-registry.js';
import { KeyedRunner } from './keyed-runner.js';
import { causedBy, StatementGate } from './statement-gate.js';
import { versionGuard } from './version-guard.js';
import type { Outcome, WorkItem } from './work-item.js';

/**
 * Thrown out of the optimistic pass to roll it back. `index` is the one message known to have
 * failed, so the savepoint pass records it without running it again; undefined when several failed,
 * a batch handler failed, or a failed statement may have been another handler's doing.
 */
export class HandlerFailed extends Error {
  constructor(
    readonly index: number | undefined,
    cause: unknown,
  ) {
    super('a handler failed in the optimistic pass', { cause });
  }
}

type Runnable = { readonly index: number; readonly item: WorkItem; readonly resolved: Resolved };

/**
 * Runs the fresh messages' handlers in `tx`, without savepoints: per-message handlers up to
 * `handlerConcurrency` at once (one ordering key at a time with `perKeySerial`), and consecutive
 * messages of an `onBatch` type in one call. Fills `outcomes`; throws HandlerFailed on any failure,
 * once no handler is running any more.
 */
export async function runHandlers(
  tx: SqlExecutor,
  runnable: readonly Runnable[],
  fresh: ReadonlySet<string>,
  outcomes: Outcome[],
  options: Pick<ResolvedConsumerOptions, 'group' | 'handlerConcurrency' | 'perKeySerial' | 'store'>,
): Promise<void> {
  const { group, perKeySerial } = options;
  const gate = new StatementGate(tx);
  const versions = versionGuard(options.store.versionGuards, group, gate.executor);
  const runner = new KeyedRunner(options.handlerConcurrency);
  const settle = async () => {
    const failures = await runner.drain();
    if (failures.length > 0 || gate.failed) throw rerun(failures, gate);
  };
  let run: { batch: BatchHandler; type: string; members: Runnable[] } | undefined;
  const flush = async () => {
    if (!run) return;
    const { batch, members } = run;
    run = undefined;
    await settle(); // the handlers before it come first
    try {
      await batch(
        members.map((m) => ({ payload: m.resolved.envelope.payload, envelope: m.resolved.envelope })),
        { tx: gate.executor, group, replay: members.some((m) => m.item.replay), versions },
      );
    } catch (cause) {
      throw new HandlerFailed(undefined, cause); // which message failed is unknown: all go again alone
    }
    for (const m of members) outcomes[m.index] = { kind: 'handled' };
  };
  const started = new Set<string>();
  for (const member of runnable) {
    const { index, item, resolved } = member;
    const id = item.message.id;
    if (!fresh.has(id) || started.has(id)) {
      outcomes[index] = { kind: 'duplicate' };
      continue;
    }
    started.add(id);
    if (resolved.batch) {
      // Consecutive fresh messages of a type registered with onBatch go to its handler in one call.
      if (run && (run.batch !== resolved.batch || run.type !== resolved.envelope.type)) await flush();
      run ??= { batch: resolved.batch, type: resolved.envelope.type, members: [] };
      run.members.push(member);
      continue;
    }
    await flush();
    const { envelope, handler } = resolved;
    runner.add(perKeySerial ? envelope.orderingKey : undefined, async () => {
      try {
        await handler(envelope.payload, { tx: gate.executor, envelope, group, replay: item.replay, versions });
      } catch (cause) {
        throw new HandlerFailed(index, cause);
      }
      outcomes[index] = { kind: 'handled' };
    });
  }
  await flush();
  await settle();
}

/** The failure to roll back with: a known index only for one failing handler that caused its own failure. */
function rerun(failures: readonly unknown[], gate: StatementGate): HandlerFailed {
  const only = failures.length === 1 ? failures[0] : undefined;
  if (only instanceof HandlerFailed && (!gate.failed || causedBy(only.cause, gate.firstError))) return only;
  // Several failed, or a statement failed that its handler did not throw (caught, or another's error).
  const first = failures[0];
  return new HandlerFailed(undefined, first instanceof HandlerFailed ? first.cause : (first ?? gate.firstError));
}
