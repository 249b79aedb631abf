import { InvalidOptionError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';

/** A comma followed by a scheme starts another URL: `amqp://a,amqp://b` is two, given as one string. */
const ANOTHER_URL = /,\s*[a-z][a-z0-9+.-]*:\/\//i;
const EXAMPLE = {
  amqp: '["amqp://mq-a:5672", "amqp://mq-b:5672"]',
  http: '["http://mq-a:15672", "http://mq-b:15672"]',
};

/**
 * The cluster nodes an AMQP option names: one URL or a non-empty list, one per node, each
 * `amqp://` or `amqps://` with a host, all on one vhost (a cluster serves the same vhosts on every
 * node), no node twice. A comma-separated string is refused rather than split, since a password
 * may hold a comma. Messages never show a password.
 * @example
 * resolveNodeUrls(['amqp://u:p@mq-a:5672/shop', 'amqp://u:p@mq-b:5672/shop'], 'url'); // both, frozen
 * resolveNodeUrls('amqp://mq-a,amqp://mq-b', 'url'); // throws InvalidOptionError for "url"
 */
export function resolveNodeUrls(value: unknown, option: string): readonly string[] {
  let vhost: { at: string; path: string } | undefined;
  return resolveUrlList(value, option, 'amqp', (url, at) => {
    const path = url.pathname === '' ? '/' : url.pathname;
    vhost ??= { at, path };
    if (path !== vhost.path)
      throw new InvalidOptionError(
        at,
        `names another vhost than ${vhost.at}: every node of a cluster serves the same vhosts`,
      );
  });
}

/** The management API of one node or a list of nodes: each `http://` or `https://`, as {@link resolveNodeUrls}. */
export function resolveManagementUrls(value: unknown, option: string): readonly string[] {
  return resolveUrlList(value, option, 'http', () => {});
}

/** A node's URL for logs and messages: the password masked. */
export function describeNode(url: string): string {
  return redact(url);
}

function resolveUrlList(
  value: unknown,
  option: string,
  kind: 'amqp' | 'http',
  check: (url: URL, at: string) => void,
): readonly string[] {
  const list = typeof value === 'string' ? [value] : Array.isArray(value) ? (value as unknown[]) : undefined;
  if (!list || list.length === 0)
    throw new InvalidOptionError(
      option,
      `must be a URL or a non-empty list of them, one per node, e.g. ${EXAMPLE[kind]}`,
    );
  const seen = new Map<string, string>();
  const urls = list.map((entry, i) => {
    const at = Array.isArray(value) ? `${option}[${i}]` : option;
    const url = parseUrl(entry, at, kind);
    const node = `${url.protocol}//${url.hostname}:${url.port || defaultPort(url.protocol)}`;
    const first = seen.get(node);
    if (first !== undefined) throw new InvalidOptionError(at, `names the node ${node} again (as ${first} does)`);
    seen.set(node, at);
    check(url, at);
    return entry as string;
  });
  return Object.freeze(urls);
}

function parseUrl(entry: unknown, at: string, kind: 'amqp' | 'http'): URL {
  const form = kind === 'amqp' ? 'amqp://user:pass@host:5672/vhost' : 'http://user:pass@host:15672';
  if (typeof entry !== 'string' || entry.length === 0) throw new InvalidOptionError(at, 'must be a non-empty string');
  if (ANOTHER_URL.test(entry))
    throw new InvalidOptionError(
      at,
      `holds several URLs separated by commas: give one URL per node in a list, e.g. ${EXAMPLE[kind]}`,
    );
  if (!new RegExp(`^${kind}s?://`).test(entry))
    throw new InvalidOptionError(at, `must start with "${kind}://" or "${kind}s://"`);
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new InvalidOptionError(at, `is not a valid URL (${form})`);
  }
  if (url.hostname === '') throw new InvalidOptionError(at, `must name a host (${form})`);
  if (url.hostname.includes(','))
    throw new InvalidOptionError(
      at,
      `names several hosts ("${url.hostname}"): give one URL per node in a list, e.g. ${EXAMPLE[kind]}`,
    );
  return url;
}

function defaultPort(protocol: string): string {
  return { 'amqp:': '5672', 'amqps:': '5671', 'http:': '80', 'https:': '443' }[protocol] ?? '';
}
