import { pathToFileURL } from 'node:url';
import { ConfigError } from '../../config/config-error.js';
import type { Consumer } from '../../consumer/consumer.js';
import type { SuretyStore } from '../context.js';

export interface LoadedConsumers {
  readonly consumers: readonly Consumer[];
  /** The module's own `close()`, called on shutdown (its database pools, transports). */
  readonly close: () => Promise<void>;
}

/** What a module exporting a function is called with: the database `replayer.database` names, opened. */
export interface ReplayerModuleContext {
  /** The database's name: `default` for `database`, else its key in `databases`. */
  readonly database: string;
  /** Its store, opened by `surety start` and closed after the replayer stops. */
  readonly store: SuretyStore;
}

const SHAPE =
  'must export your Consumer: as default, as `consumer`, as `consumers` (a list), or a function returning one or a list';

/**
 * Imports the user's module that builds the consumer(s) to replay through. The replayer needs only
 * the consumer's handlers, store and retry policy; it never subscribes to the broker. A module
 * exporting a function gets `context`, so its consumers can use the store `surety start` opened.
 * @example
 * // consumers.js
 * export default ({ store }) => new Consumer({ group: 'billing', store, transport }).on('order.created', handle);
 */
export async function loadConsumers(modulePath: string, context: ReplayerModuleContext): Promise<LoadedConsumers> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(modulePath).href)) as Record<string, unknown>;
  } catch (err) {
    const detail = err instanceof Error ? err.message.split('\n', 1)[0] : String(err);
    throw new ConfigError([{ path: 'replayer.module', message: `cannot import ${modulePath}: ${detail}` }], {
      cause: err,
    });
  }
  let value = mod.consumers ?? mod.consumer ?? mod.default;
  if (typeof value === 'function' && !isConsumer(value))
    value = await (value as (c: ReplayerModuleContext) => unknown)(context);
  const list = (Array.isArray(value) ? value : [value]) as unknown[];
  if (list.length === 0 || !list.every(isConsumer))
    throw new ConfigError([{ path: 'replayer.module', message: `${modulePath} ${SHAPE}` }]);
  const groups = new Set<string>();
  for (const c of list as Consumer[]) {
    if (groups.has(c.group))
      throw new ConfigError([
        { path: 'replayer.module', message: `${modulePath} exports two consumers of group "${c.group}"` },
      ]);
    groups.add(c.group);
  }
  const close = typeof mod.close === 'function' ? (mod.close as () => Promise<void>) : async () => undefined;
  return { consumers: list as Consumer[], close: async () => close() };
}

/** Duck-typed, so a Consumer built with another copy of the package fits too. */
function isConsumer(value: unknown): boolean {
  const c = value as { options?: { group?: unknown; store?: unknown }; processor?: { process?: unknown } } | null;
  return typeof c?.options?.group === 'string' && typeof c.processor?.process === 'function' && !!c.options.store;
}
