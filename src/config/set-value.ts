type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Writes a value given by a variable or a flag into the raw config at a dotted path, and records
 * where it came from. `database.tablePrefix` and `database.schema` apply to every entry of
 * `databases` when the config lists several (SURETY_TABLE_PREFIX, --schema have one value for all).
 */
export function setValue(
  target: Mapping,
  path: string,
  value: unknown,
  sources: Map<string, string>,
  source: string,
): void {
  const field = /^database\.(tablePrefix|schema)$/.exec(path)?.[1];
  if (field && target.database === undefined && isMapping(target.databases)) {
    for (const [name, entry] of Object.entries(target.databases)) {
      if (!isMapping(entry)) continue;
      entry[field] = value;
      sources.set(`databases.${name}.${field}`, source);
    }
    return;
  }
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (!isMapping(node[key])) node[key] = {};
    node = node[key] as Mapping;
  }
  node[keys.at(-1)!] = value;
  sources.set(path, source);
}
