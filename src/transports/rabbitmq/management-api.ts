import { SuretyError } from '../../core/errors.js';
import type { QueueState } from '../../ports/broker-probe.js';
import { deadLetterSettings } from './queue-dead-letters.js';

/** The fields Surety reads from the management API's `GET /api/queues/{vhost}/{name}`. */
interface ManagementQueue {
  readonly durable?: boolean;
  readonly type?: string;
  readonly arguments?: Record<string, unknown>;
  readonly effective_policy_definition?: Record<string, unknown> | [];
  readonly messages_ready?: number;
  readonly messages_unacknowledged?: number;
  readonly consumers?: number;
}

/** The fields read from each entry of `GET /api/queues/{vhost}`. */
interface ListedQueue {
  readonly name: string;
  readonly exclusive?: boolean;
}

export interface ManagementTarget {
  /** Base URL without credentials, e.g. `http://localhost:15672`. */
  readonly base: string;
  /** `Basic ...` header value. */
  readonly authorization: string;
  readonly vhost: string;
}

/**
 * Where the management API is and how to log in: credentials from `managementUrl`, else those of
 * the AMQP URL; the vhost from the AMQP URL.
 */
export function managementTarget(managementUrl: string, amqpUrl: string): ManagementTarget {
  const m = new URL(managementUrl);
  const a = new URL(amqpUrl);
  const user = decodeURIComponent(m.username || a.username || 'guest');
  const pass = decodeURIComponent(m.password || a.password || 'guest');
  const path = a.pathname.replace(/^\//, '');
  m.username = '';
  m.password = '';
  return {
    base: m.toString().replace(/\/+$/, ''),
    authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`,
    vhost: path ? decodeURIComponent(path) : '/',
  };
}

/**
 * The broker's version (`GET /api/overview`), which decides RabbitMQ 4's default delivery limit;
 * null when the API does not say.
 */
export async function fetchServerVersion(target: ManagementTarget, timeoutMs: number): Promise<string | null> {
  try {
    const res = await get(target, '/api/overview?columns=rabbitmq_version', timeoutMs, 'the overview');
    const version = res ? ((await res.json()) as { rabbitmq_version?: unknown }).rabbitmq_version : undefined;
    return typeof version === 'string' ? version : null;
  } catch {
    return null; // the queue requests report an unreachable or refusing API
  }
}

/** One queue from the management API; a 404 is a missing queue. */
export async function fetchQueueState(
  target: ManagementTarget,
  name: string,
  timeoutMs: number,
  serverVersion: string | null,
): Promise<QueueState> {
  const path = `/api/queues/${encodeURIComponent(target.vhost)}/${encodeURIComponent(name)}`;
  const res = await get(target, path, timeoutMs, `queue "${name}"`);
  if (!res) return missingQueue(name, 'management');
  const q = (await res.json()) as ManagementQueue;
  const policy = Array.isArray(q.effective_policy_definition) ? {} : (q.effective_policy_definition ?? {});
  const args: Record<string, unknown> = { ...(q.arguments ?? {}) };
  // A policy's delivery limit counts as much as a declared one.
  if (args['x-delivery-limit'] === undefined && typeof policy['delivery-limit'] === 'number')
    args['x-delivery-limit'] = policy['delivery-limit'];
  const type = q.type ?? (typeof args['x-queue-type'] === 'string' ? args['x-queue-type'] : 'classic');
  return {
    name,
    exists: true,
    ready: q.messages_ready ?? 0,
    unacked: q.messages_unacknowledged ?? 0,
    consumers: q.consumers ?? 0,
    durable: q.durable ?? null,
    type,
    arguments: args,
    ...deadLetterSettings({ name, type, arguments: q.arguments ?? {}, policy, serverVersion }),
    source: 'management',
  };
}

/**
 * The vhost's queue names (`GET /api/queues/{vhost}`), sorted. Exclusive queues are left out: they
 * belong to one connection (e.g. a reply queue) and vanish with it, so nothing is lost there.
 */
export async function fetchQueueNames(target: ManagementTarget, timeoutMs: number): Promise<string[]> {
  const path = `/api/queues/${encodeURIComponent(target.vhost)}?columns=name,exclusive`;
  const what = `the queues of vhost "${target.vhost}"`;
  const res = await get(target, path, timeoutMs, what);
  if (!res) throw answered(target, 404, what); // no such vhost
  const queues = (await res.json()) as ListedQueue[];
  return queues
    .filter((q) => q.exclusive !== true)
    .map((q) => q.name)
    .sort();
}

/** A GET with the target's credentials; a 404 resolves to undefined, any other failure rejects. */
async function get(
  target: ManagementTarget,
  path: string,
  timeoutMs: number,
  what: string,
): Promise<Response | undefined> {
  let res: Response;
  try {
    res = await fetch(`${target.base}${path}`, {
      headers: { authorization: target.authorization, accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new SuretyError('SURETY_CONNECTION_LOST', `management API at ${target.base} did not answer`, { cause: err });
  }
  if (res.ok) return res;
  await res.body?.cancel();
  if (res.status === 404) return undefined;
  throw answered(target, res.status, what);
}

function answered(target: ManagementTarget, status: number, what: string): SuretyError {
  return new SuretyError(
    'SURETY_CONNECTION_LOST',
    `management API at ${target.base} answered ${status} for ${what}${status === 401 ? ' (check the credentials)' : ''}`,
  );
}

export function missingQueue(name: string, source: QueueState['source']): QueueState {
  return {
    name,
    exists: false,
    ready: 0,
    unacked: null,
    consumers: 0,
    durable: null,
    type: null,
    arguments: null,
    source,
  };
}
