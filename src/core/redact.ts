/** Query parameters that carry a secret or a key file: dropped from shown URLs. */
const SECRET_PARAM = /pass|pwd|secret|token|key|auth|cred|^ssl/i;

/**
 * Hides the credentials in a connection URL, for error messages, logs and command output: the
 * password becomes `***`, and query parameters such as `password`, `sslkey` or `sslpassword` are
 * dropped. A URL that does not parse, or parses ambiguously (an `@` after the host, as in a
 * password holding `/`), keeps nothing between `//` and its last `@`. A string without `@` or
 * query parameters comes back unchanged.
 * @example
 * redact('postgres://app:s3cret@db/app?sslmode=require&password=x'); // 'postgres://app:***@db/app'
 * redact('postgres://app:pa/ss@db/app'); // 'postgres://***@db/app'
 */
export function redact(text: string): string {
  return withoutSecretParams(withoutUserinfoSecret(text));
}

function withoutUserinfoSecret(text: string): string {
  const at = text.lastIndexOf('@');
  if (at < 0) return text;
  // `sqlite:<path>` holds a file name, which may contain `@`, never a credential.
  if (/^sqlite:/i.test(text)) return text;
  const slashes = text.indexOf('//');
  // No authority (`app:s3cret@db`, a URL missing its scheme): everything up to the `@` may be secret.
  if (slashes < 0 || slashes > at) return `***${text.slice(at)}`;
  const url = parse(text);
  // Parsed, and nothing of the text after the host holds an `@`: the parser found the whole userinfo.
  if (url && !`${url.pathname}${url.search}${url.hash}`.includes('@')) {
    if (url.password === '') return text;
    url.password = '***';
    return url.href;
  }
  return `${text.slice(0, slashes + 2)}***${text.slice(at)}`;
}

function parse(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/**
 * Drops `name=value` pairs with a secret-looking name. Pairs are found after `?` or `&` anywhere,
 * since masking may have removed the `?` of a query that held an `@`.
 */
function withoutSecretParams(text: string): string {
  if (!/[?&]/.test(text)) return text;
  return text
    .replace(/([?&])([^=&?#]*)=[^&#]*/g, (pair, separator: string, name: string) =>
      SECRET_PARAM.test(decode(name)) ? (separator === '?' ? '?' : '') : pair,
    )
    .replace(/\?&+/, '?')
    .replace(/\?(?=#|$)/, '');
}

function decode(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}
