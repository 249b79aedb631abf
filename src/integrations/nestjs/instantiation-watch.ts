import type { ModulesContainer } from '@nestjs/core';

/** What this reads of Nest's InstanceWrapper: the signal of its latest load, which settles with a failed load's error. */
interface WatchedWrapper {
  readonly settlementSignal?: { asPromise(): Promise<unknown> };
  readonly isTransient?: boolean;
  isDependencyTreeStatic(): boolean;
}

interface WatchedModule {
  readonly providers: Map<unknown, WatchedWrapper>;
  readonly injectables: Map<unknown, WatchedWrapper>;
  readonly controllers: Map<unknown, WatchedWrapper>;
}

/**
 * Calls `onFailure` once if creating the application's providers, injectables or controllers fails. NestJS then
 * rejects `NestFactory.create` without an application anyone could close and runs none of its hooks, so what
 * SuretyModule opened before would stay open (with `abortOnError: false`; by default Nest ends the process).
 * It follows the signal each of Nest's loads settles, as Nest's own injector does, picking up loads that start later
 * (controllers start once their module's providers exist) on the turn after each settles. Once every load it saw has
 * settled and no new one started, instantiation is over and it stops: request-time loads are not its concern.
 */
export function watchInstantiation(modules: ModulesContainer, onFailure: (err: unknown) => void): void {
  const seen = new WeakSet<object>();
  let failed = false;
  let scheduled = false;
  const schedule = () => {
    if (scheduled || failed) return;
    scheduled = true;
    setImmediate(scan);
  };
  const watch = (wrapper: WatchedWrapper) => {
    const signal = wrapper.settlementSignal;
    if (!signal || typeof signal.asPromise !== 'function' || seen.has(signal)) return;
    // A request- or transient-scoped load happens per request or inquirer; a failing one fails its static inquirer.
    if (wrapper.isTransient || !wrapper.isDependencyTreeStatic()) return;
    seen.add(signal);
    void signal.asPromise().then((err) => {
      if (err === undefined || err === null) return schedule();
      if (failed) return;
      failed = true;
      onFailure(err);
    });
  };
  function scan() {
    scheduled = false;
    if (failed) return;
    for (const module of modules.values() as Iterable<WatchedModule>)
      for (const wrappers of [module.providers, module.injectables, module.controllers])
        for (const wrapper of wrappers.values()) watch(wrapper);
  }
  scan();
}
