/**
 * C0 and C1 control characters and DEL (a terminal acts on ESC, CSI and OSC sequences built from
 * them: clearing the screen, retitling the window, writing the clipboard), plus the line separators
 * and bidirectional overrides that make text look other than it is.
 */
// Matching control characters is the point here.
/* eslint-disable no-control-regex */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
const CONTROL_BUT_NEWLINE =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
/* eslint-enable no-control-regex */

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Makes text from messages and stores safe to print on a terminal: every control character
 * becomes a visible escape (`\x1b`, `\n`, `\u202e`). `keepNewlines` leaves line feeds alone, for
 * multi-line text such as a message body.
 * @example
 * escapeControlChars('k\x1b]0;owned\x07'); // 'k\\x1b]0;owned\\x07'
 */
export function escapeControlChars(text: string, options: { keepNewlines?: boolean } = {}): string {
  return text.replace(options.keepNewlines ? CONTROL_BUT_NEWLINE : CONTROL, escapeOne);
}

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}
