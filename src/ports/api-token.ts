import { z } from 'zod';

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
