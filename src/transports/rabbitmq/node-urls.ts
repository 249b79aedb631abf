import { z } from 'zod';
import { redact } from '../../core/redact.js';

/** A comma followed by a scheme starts another URL: `amqp://a,amqp://b` is two, given as one string. */
const ANOTHER_URL = /,\s*[a-z][a-z0-9+.-]*:\/\//i;
const EXAMPLE = {
  amqp: '["amqp://mq-a:5672", "amqp://mq-b:5672"]',
  http: '["http://mq-a:15672", "http://mq-b:15672"]',
};

type Kind = 'amqp' | 'http';

/**
 * The cluster nodes an AMQP option (`option`, named in messages) lists: one URL or a non-empty
 * list, one per node, each `amqp://` or `amqps://` with a host, all on one vhost (a cluster serves
 * the same vhosts on every node), no node twice. A comma-separated string is refused rather than
 * split, since a password may hold a comma. Messages never show a password. Parses to a frozen list.
 * @example
 * z.object({ url: nodeUrlsSchema('url') }).parse({ url: ['amqp://u:p@mq-a/shop', 'amqp://u:p@mq-b/shop'] }); // both
 * z.object({ url: nodeUrlsSchema('url') }).parse({ url: 'amqp://mq-a,amqp://mq-b' }); // fails at "url": one URL per node
 */
export function nodeUrlsSchema(option: string) {
  return urlListSchema(option, 'amqp');
}

/** The management API of one node or a list of nodes: each `http://` or `https://`, as {@link nodeUrlsSchema}. */
export function managementUrlsSchema(option: string) {
  return urlListSchema(option, 'http');
}

/** A node's URL for logs and messages: the password masked. */
export function describeNode(url: string): string {
  return redact(url);
}

function urlListSchema(option: string, kind: Kind) {
  return z.unknown().transform((value, ctx): readonly string[] => {
    const list = typeof value === 'string' ? [value] : Array.isArray(value) ? (value as unknown[]) : [];
    const fail = (i: number, message: string) => {
      ctx.addIssue({ code: 'custom', path: Array.isArray(value) ? [i] : [], message });
      return z.NEVER;
    };
    if (list.length === 0)
      return fail(-1, `must be a URL or a non-empty list of them, one per node, e.g. ${EXAMPLE[kind]}`);
    const at = (i: number) => (Array.isArray(value) ? `${option}[${i}]` : option);
    const nodes = new Map<string, string>();
    let vhost: { at: string; path: string } | undefined;
    for (const [i, entry] of list.entries()) {
      const url = parseUrl(entry, kind);
      if (typeof url === 'string') return fail(i, url);
      const node = `${url.protocol}//${url.hostname}:${url.port || defaultPort(url.protocol)}`;
      const first = nodes.get(node);
      if (first !== undefined) return fail(i, `names the node ${node} again (as ${first} does)`);
      nodes.set(node, at(i));
      if (kind === 'amqp') {
        const path = url.pathname === '' ? '/' : url.pathname;
        vhost ??= { at: at(i), path };
        if (path !== vhost.path)
          return fail(i, `names another vhost than ${vhost.at}: every node of a cluster serves the same vhosts`);
      }
    }
    return Object.freeze(list as string[]);
  });
}

/** The entry as a URL, or what is wrong with it. */
function parseUrl(entry: unknown, kind: Kind): URL | string {
  const form = kind === 'amqp' ? 'amqp://user:pass@host:5672/vhost' : 'http://user:pass@host:15672';
  if (typeof entry !== 'string' || entry.length === 0) return 'must be a non-empty string';
  if (ANOTHER_URL.test(entry))
    return `holds several URLs separated by commas: give one URL per node in a list, e.g. ${EXAMPLE[kind]}`;
  if (!new RegExp(`^${kind}s?://`).test(entry)) return `must start with "${kind}://" or "${kind}s://"`;
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return `is not a valid URL (${form})`;
  }
  if (url.hostname === '') return `must name a host (${form})`;
  if (url.hostname.includes(','))
    return `names several hosts ("${url.hostname}"): give one URL per node in a list, e.g. ${EXAMPLE[kind]}`;
  return url;
}

function defaultPort(protocol: string): string {
  return { 'amqp:': '5672', 'amqps:': '5671', 'http:': '80', 'https:': '443' }[protocol] ?? '';
}
