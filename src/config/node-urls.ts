import { z } from 'zod';
import { managementUrlsSchema, nodeUrlsSchema as transportNodeUrls } from '../transports/rabbitmq/node-urls.js';

/** A comma followed by a scheme starts the next URL; any other comma (a password's) stays in its URL. */
const NEXT_URL = /,(?=\s*[a-z][a-z0-9+.-]*:\/\/)/i;

/**
 * `transport.url` or `transport.managementUrl`: one URL or a list, one per cluster node, checked
 * by the same rules as the transport's own option (scheme, host, one vhost, no node twice), so
 * that a bad list is a config error at its key, not a failure at start.
 */
export function nodeUrlsSchema(kind: 'amqp' | 'http', key: string) {
  const rules = kind === 'amqp' ? transportNodeUrls(key) : managementUrlsSchema(key);
  const one = z.string().regex(new RegExp(`^${kind}s?://`), { error: `must start with ${kind}:// or ${kind}s://` });
  return z
    .union([one, z.array(one)], { error: `must be a ${kind}:// URL or a list of them, one per node` })
    .transform((value, ctx) => {
      // A transform (unlike a refinement) runs only on a string or list of the right schemes: each problem is said once.
      for (const issue of rules.safeParse(value).error?.issues ?? []) {
        ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
      }
      return value;
    });
}

/**
 * Splits an environment variable's comma-separated URLs (`amqp://a:5672,amqp://b:5672`): one URL
 * stays a string, several become a list.
 * @example
 * splitUrls('amqp://u:p@a,amqp://u:p@b'); // ['amqp://u:p@a', 'amqp://u:p@b']
 */
export function splitUrls(text: string): string | string[] {
  const urls = text
    .split(NEXT_URL)
    .map((u) => u.trim())
    .filter(Boolean);
  return urls.length === 1 ? urls[0]! : urls;
}
