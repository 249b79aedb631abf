import { AdminError, NotFoundError } from '../admin/admin-errors.js';
import { mergeLineage, type MergedLineage } from '../admin/lineage-merge.js';
import type { StoreAnswer } from '../admin/store-fanout.js';
import { namesDatabases } from '../config/databases.js';
import { describeError } from '../core/errors.js';
import type { Lineage } from '../ports/admin-store.js';
import {
  adminFor,
  closeStores,
  loadCliConfig,
  namedError,
  openStores,
  selectDatabases,
  type CommonOptions,
} from './context.js';
import type { CliIo } from './io.js';

/** Where a message was looked for, and what each database knows of it. */
export type LineageSearch =
  | { readonly named: false; readonly lineage: Lineage }
  | { readonly named: true; readonly databases: readonly string[]; readonly lineage: MergedLineage };

/**
 * A message's lineage from every database of the config (or the one `--store` names), merged as
 * the console merges it: each item says which database it came from. A database that fails is
 * listed as unavailable while the others answer; not found only when every one answered and none
 * knows the message. With a single unnamed `database`, its lineage as it is.
 */
export async function searchLineage(opts: CommonOptions, io: CliIo, messageId: string): Promise<LineageSearch> {
  const { config } = await loadCliConfig(opts, io);
  const databases = selectDatabases(config, opts.store, 'all');
  const stores = await openStores(config, databases);
  try {
    if (!namesDatabases(config)) {
      const lineage = await adminFor(config, stores[0]!.store).lineage(messageId);
      return { named: false, lineage };
    }
    const answers = await Promise.all(
      stores.map(async ({ name, store }): Promise<StoreAnswer<Lineage | undefined>> => {
        try {
          return { store: name, ok: true, value: await adminFor(config, store).findLineage(messageId) };
        } catch (err) {
          if (err instanceof AdminError) throw err;
          return { store: name, ok: false, unavailable: { store: name, error: describeError(err) } };
        }
      }),
    );
    const [first] = answers;
    if (first && !first.ok && answers.every((a) => !a.ok)) {
      throw namedError(config, first.store, first.unavailable.error);
    }
    const names = stores.map((s) => s.name);
    try {
      return { named: true, databases: names, lineage: mergeLineage(messageId, answers) };
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      const where = names.length === 1 ? `database ${names[0]}` : `any of the databases ${names.join(', ')}`;
      throw new NotFoundError(`no outbox row, inbox record or dead letter of ${where} knows message ${messageId}`);
    }
  } finally {
    await closeStores(stores);
  }
}
