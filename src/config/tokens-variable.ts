import { ConfigError } from './config-error.js';

const FORM = 'name:role:token or name:role:sha256=<hex>';
const ROLES: readonly string[] = ['viewer', 'operator'];

/** A token entry as the config schema takes it; the schema checks the name's characters and the token's length. */
export type TokenEntry = { name: string; role: string; token: string } | { name: string; role: string; sha256: string };

/**
 * Parses `SURETY_TOKENS`: comma-separated `name:role:token` (or `name:role:sha256=<hex>`) entries;
 * the token is everything after the second `:`. Errors name the entry by position and the field
 * that is wrong, never its text: a misplaced field may be the token.
 * @example
 * parseTokensVariable('ops:operator:0123456789abcdef-ops', 'SURETY_TOKENS');
 * // [{ name: 'ops', role: 'operator', token: '0123456789abcdef-ops' }]
 */
export function parseTokensVariable(text: string, variable: string): TokenEntry[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const fail = (message: string) => new ConfigError([{ path: 'console.tokens', from: variable, message }]);
  return entries.map((entry, i) => {
    const which = `entry ${i + 1} of ${entries.length}`;
    const [first = '', second = '', ...rest] = entry.split(':');
    const [name, role, secret] = [first.trim(), second.trim(), rest.join(':').trim()];
    if (!name || !role || !secret) throw fail(`${which} must be ${FORM}`);
    if (!ROLES.includes(role)) throw fail(`${which}: the role (after the first ":") must be ${ROLES.join(' or ')}`);
    return secret.startsWith('sha256=')
      ? { name, role, sha256: secret.slice('sha256='.length) }
      : { name, role, token: secret };
  });
}
