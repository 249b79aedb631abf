import { z } from 'zod';
import { integerIn, listOf, nonEmptyString } from '../core/option-schemas.js';
import { parseOptions } from '../core/options.js';
import type { SubscribeOptions } from '../ports/transport.js';

/**
 * Validates the options of one `subscribe` call, as every transport does, so that a bad group,
 * topic list or prefetch names itself; `maxPrefetch` is the broker's limit.
 */
export function parseSubscribeOptions(input: SubscribeOptions, maxPrefetch: number): SubscribeOptions {
  const schema = z.object(
    {
      group: nonEmptyString(),
      topics: listOf(nonEmptyString()).min(1, { error: 'must be a non-empty list of topics' }),
      prefetch: integerIn(1, maxPrefetch).optional(),
    },
    { error: 'must be an object with "group" and "topics"' },
  );
  return parseOptions(schema, input, '');
}
