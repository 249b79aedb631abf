import { createHash, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import { InvalidOptionError } from '../../core/errors.js';
import type { Actor } from '../../ports/admin-store.js';
import type { tokenConfigSchema } from '../../ports/api-token.js';

interface Entry extends Actor {
  readonly digest: Buffer;
}

/** SHA-256 of a token, hex: what to put in a config instead of the token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The configured tokens, kept only as SHA-256 digests. A presented token is hashed and compared with
 * every entry in constant time, so neither the comparison nor the position of a match leaks timing.
 */
export class TokenSet {
  private readonly entries: readonly Entry[];

  constructor(tokens: readonly z.output<typeof tokenConfigSchema>[]) {
    this.entries = tokens.map((t) => ({
      name: t.name,
      role: t.role,
      digest: Buffer.from(t.sha256 ?? hashToken(t.token!), 'hex'),
    }));
    if (new Set(this.entries.map((e) => e.digest.toString('hex'))).size !== this.entries.length) {
      throw new InvalidOptionError('tokens', 'two tokens have the same value');
    }
  }

  /** The actor a token belongs to, or undefined. */
  verify(token: string): (Actor & { digest: Buffer }) | undefined {
    const digest = createHash('sha256').update(token, 'utf8').digest();
    let match: Entry | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(digest, entry.digest)) match = entry;
    }
    return match;
  }

  byName(name: string): (Actor & { digest: Buffer }) | undefined {
    return this.entries.find((e) => e.name === name);
  }
}
