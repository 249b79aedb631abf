import type { ConfigProblem } from './config-error.js';

/**
 * Every string of the raw config that holds U+0000 (NUL), as a problem at its key path. No database
 * or broker takes a NUL in a name (PostgreSQL text cannot hold one): refusing it here keeps it from
 * reaching a store as a filter or a name and failing there as if the database were down.
 * @example
 * nulProblems({ transport: { queues: ['a\u0000'] } }, new Map()); // [{ path: 'transport.queues[0]', ... }]
 */
export function nulProblems(raw: unknown, sources: ReadonlyMap<string, string>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const walk = (value: unknown, path: string, dotted: string): void => {
    if (typeof value === 'string') {
      if (value.includes('\u0000')) {
        const from = sources.get(dotted);
        problems.push({ path: path || '(root)', message: 'must not contain U+0000 (NUL)', ...(from ? { from } : {}) });
      }
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${path}[${i}]`, dotted));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, v] of Object.entries(value)) {
        walk(v, path ? `${path}.${key}` : key, dotted ? `${dotted}.${key}` : key);
      }
    }
  };
  walk(raw, '', '');
  return problems;
}
