import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Actor } from '../../ports/admin-store.js';

export interface Session extends Actor {
  /** Random, per sign-in: what sign-out revokes. */
  readonly id: string;
  readonly expiresAt: number;
  /** The value the console sends in X-CSRF-Token with every change. */
  readonly csrfToken: string;
}

interface Payload {
  readonly i: string;
  readonly n: string;
  readonly r: Actor['role'];
  readonly e: number;
  readonly c: string;
  /** Fingerprint of the token that opened the session: rotating that token ends its sessions. */
  readonly f: string;
}

/**
 * Signed sessions: the cookie holds the session id, actor, expiry and CSRF token, signed with
 * HMAC-SHA256, so every instance sharing the secret accepts it. Only sign-out keeps state (see
 * {@link SessionRevocations}).
 */
export class SessionCodec {
  private readonly key: Buffer;

  constructor(secret: string | undefined) {
    this.key = secret === undefined ? randomBytes(32) : Buffer.from(secret, 'utf8');
  }

  issue(actor: Actor & { digest: Buffer }, now: number, ttlMs: number): { value: string; session: Session } {
    const payload: Payload = {
      i: randomBytes(16).toString('base64url'),
      n: actor.name,
      r: actor.role,
      e: now + ttlMs,
      c: randomBytes(24).toString('base64url'),
      f: this.fingerprint(actor.digest),
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return { value: `${body}.${this.sign(body)}`, session: toSession(payload) };
  }

  /** The session in a cookie value, if its signature is ours, it has not expired and its token still exists. */
  verify(
    value: string,
    now: number,
    lookup: (name: string) => (Actor & { digest: Buffer }) | undefined,
  ): Session | undefined {
    const dot = value.indexOf('.');
    if (dot <= 0 || value.length > 2048) return undefined;
    const body = value.slice(0, dot);
    const given = Buffer.from(value.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(body), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    } catch {
      return undefined;
    }
    if (typeof payload.e !== 'number' || payload.e <= now || typeof payload.i !== 'string') return undefined;
    const actor = lookup(payload.n);
    if (!actor || actor.role !== payload.r || this.fingerprint(actor.digest) !== payload.f) return undefined;
    return toSession(payload);
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(`session:${body}`).digest('base64url');
  }

  private fingerprint(digest: Buffer): string {
    return createHmac('sha256', this.key).update('token:').update(digest).digest('base64url').slice(0, 16);
  }
}

function toSession(p: Payload): Session {
  return { id: p.i, name: p.n, role: p.r, expiresAt: p.e, csrfToken: p.c };
}

/** Constant-time comparison of two strings (for the CSRF token). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
