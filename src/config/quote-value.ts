import { escapeControlChars } from '../core/control-chars.js';
import { redact } from '../core/redact.js';

/**
 * A config value quoted for an error message: a URL's password masked, control characters escaped
 * (the message is printed on a terminal).
 * @example
 * quoteValue('oracle://app:s3cret@db/app'); // '"oracle://app:***@db/app"'
 */
export function quoteValue(value: string): string {
  // JSON.stringify escapes C0 controls and quotes; C1 controls and the like remain.
  return escapeControlChars(JSON.stringify(redact(value)));
}
