import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { InvalidOptionError } from '../../core/errors.js';
import type { Actor } from '../../ports/admin-store.js';

/** One API token as configured: the token itself, or its SHA-256 (hex) so the config holds no secret. */
export const tokenConfigSchema = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9._@:-]{1,64}$/, 'must be 1-64 characters of letters, digits and . _ @ : -'),
    role: z.enum(['viewer', 'operator'], { error: 'must be viewer or operator' }),
    token: z.string().min(16, 'must be at least 16 characters').max(4096).optional(),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits (the SHA-256 of the token)')
      .optional(),
  })
  .refine((t) => (t.token === undefined) !== (t.sha256 === undefined), 'give exactly one of "token" or "sha256"');

export type TokenConfig = z.input<typeof tokenConfigSchema>;

export const tokenListSchema = z
  .array(tokenConfigSchema)
  .min(1, 'at least one token is required')
  .refine((list) => new Set(list.map((t) => t.name)).size === list.length, 'token names must be unique');

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
