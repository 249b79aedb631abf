/**
 * Real database faults for tests: a table renamed away (every statement on it fails) and a trigger
 * that refuses one kind of dead-letter event (one step of a transaction fails, the others do not).
 * Each undoes itself whatever the work does.
 */
import type { StoreFixture } from '../conformance/outbox-store-suite.js';

type FaultStore = Pick<StoreFixture['store'], 'dialect' | 'transaction' | 'tables'>;

const bare = (qualified: string) => qualified.split('.').pop()!.replace(/["`]/g, '');
/** The schema part of a qualified name with its dot (`"s".`), or nothing. */
const schemaOf = (qualified: string) =>
  qualified.includes('.') ? qualified.slice(0, qualified.lastIndexOf('.') + 1) : '';
const quote = (store: FaultStore, name: string) => (store.dialect === 'mysql' ? `\`${name}\`` : `"${name}"`);
const exec = (store: FaultStore, text: string) => store.transaction((tx) => tx.query(text));

/** Runs `work` while table `qualified` is renamed away. */
export async function withTableRenamed<T>(store: FaultStore, qualified: string, work: () => Promise<T>): Promise<T> {
  const name = bare(qualified);
  const away = `${name}_off`;
  await exec(store, `ALTER TABLE ${qualified} RENAME TO ${quote(store, away)}`);
  try {
    return await work();
  } finally {
    await exec(store, `ALTER TABLE ${schemaOf(qualified)}${quote(store, away)} RENAME TO ${quote(store, name)}`);
  }
}

/** Runs `work` while inserting a dead-letter event of `kind` fails with "refused by test trigger". */
export async function withEventKindRefused<T>(store: FaultStore, kind: string, work: () => Promise<T>): Promise<T> {
  const events = store.tables.deadLetterEvents;
  const name = quote(store, `${bare(events)}_refuse`);
  const fn = `${schemaOf(events)}${name}`;
  const message = 'refused by test trigger';
  const setup: Record<FaultStore['dialect'], string[]> = {
    sqlite: [
      `CREATE TRIGGER ${name} BEFORE INSERT ON ${events} WHEN NEW.kind = '${kind}' BEGIN SELECT RAISE(ABORT, '${message}'); END`,
    ],
    postgres: [
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN IF NEW.kind = '${kind}' THEN RAISE EXCEPTION '${message}'; END IF; RETURN NEW; END $f$`,
      `CREATE TRIGGER ${name} BEFORE INSERT ON ${events} FOR EACH ROW EXECUTE FUNCTION ${fn}()`,
    ],
    mysql: [
      `CREATE TRIGGER ${name} BEFORE INSERT ON ${events} FOR EACH ROW BEGIN IF NEW.kind = '${kind}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '${message}'; END IF; END`,
    ],
  };
  const teardown: Record<FaultStore['dialect'], string[]> = {
    sqlite: [`DROP TRIGGER IF EXISTS ${name}`],
    postgres: [`DROP TRIGGER IF EXISTS ${name} ON ${events}`, `DROP FUNCTION IF EXISTS ${fn}()`],
    mysql: [`DROP TRIGGER IF EXISTS ${name}`],
  };
  for (const text of setup[store.dialect]) await exec(store, text);
  try {
    return await work();
  } finally {
    for (const text of teardown[store.dialect]) await exec(store, text);
  }
}
