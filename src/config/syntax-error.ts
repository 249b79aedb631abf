import { parse as parseYaml } from 'yaml';

/**
 * Why a config file does not parse, with its line and column, never quoting the file: it may hold
 * a token or a password. (V8 quotes the text around a JSON error; YAML quotes the offending lines
 * after its first.)
 * @example
 * describeSyntaxError('{"a": s3cret}', err, 'JSON'); // 'Unexpected token at line 1, column 7'
 */
export function describeSyntaxError(text: string, err: unknown, format: 'JSON' | 'YAML'): string {
  const message = err instanceof Error ? err.message : String(err);
  if (format === 'YAML') return message.split('\n', 1)[0]!.replace(/:$/, '');
  const reason = message.replace(/ in JSON at position \d+.*$/s, '').replace(/^(Unexpected token) .*$/s, '$1');
  const at = jsonErrorAt(text, message);
  return at ? `${reason} at line ${at.line}, column ${at.col}` : reason;
}

function jsonErrorAt(text: string, message: string): { line: number; col: number } | undefined {
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position !== undefined) {
    const before = text.slice(0, Number(position)).split('\n');
    return { line: before.length, col: before.at(-1)!.length + 1 };
  }
  // V8 gives no position with "Unexpected token"; YAML's JSON schema finds the same place.
  try {
    parseYaml(text, { schema: 'json' });
  } catch (yamlError) {
    const pos = (yamlError as { linePos?: [{ line: number; col: number }] }).linePos?.[0];
    if (pos) return { line: pos.line, col: pos.col };
  }
  return undefined;
}
