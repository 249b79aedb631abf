import { describe, expect, it } from 'vitest';
import { escapeControlChars } from '../../src/core/control-chars.js';
import { writeJson, type CliIo } from '../../src/cli/io.js';
import { renderFields, renderTable } from '../../src/cli/output/table.js';

/** Every character a terminal acts on, but the line feed: C0, DEL, C1. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

const OSC52 = '\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07';

describe('escapeControlChars', () => {
  it('shows C0, DEL and C1 controls, line separators and bidi overrides as escapes', () => {
    expect(escapeControlChars('k\x1b]0;owned\x07')).toBe('k\\x1b]0;owned\\x07');
    expect(escapeControlChars('a\tb\r\nc\x00\x7f\x9b31m')).toBe('a\\tb\\r\\nc\\x00\\x7f\\x9b31m');
    expect(escapeControlChars('safe\u202egnp.exe\u2028x')).toBe('safe\\u202egnp.exe\\u2028x');
    expect(escapeControlChars('plain text, ünïcödé, 日本語 ✓')).toBe('plain text, ünïcödé, 日本語 ✓');
  });

  it('keeps line feeds when asked, and nothing else', () => {
    const shown = escapeControlChars(`line 1\nline 2 ${OSC52}\r\n`, { keepNewlines: true });
    expect(shown).toBe('line 1\nline 2 \\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07\\r\n');
    expect(shown).not.toMatch(RAW_CONTROL);
  });
});

describe('human output', () => {
  it('a table cell is one line with its control characters escaped, then cut to its width', () => {
    const rows = [{ key: `k\x1b[2J${OSC52}`, error: 'boom\n  at f()\x1b[31mred' }];
    const text = renderTable(
      [
        { header: 'KEY', value: (r: (typeof rows)[number]) => r.key, max: 20 },
        { header: 'ERROR', value: (r: (typeof rows)[number]) => r.error },
      ],
      rows,
    );
    expect(text).not.toMatch(RAW_CONTROL);
    expect(text.split('\n')).toEqual([
      `${'KEY'.padEnd(20)}  ERROR`,
      'k\\x1b[2J\\x1b]52;c;Y…  boom at f()\\x1b[31mred',
      '',
    ]);
  });

  it('a field value stays on its line', () => {
    const text = renderFields([
      ['key', `k${OSC52}`],
      ['last error', 'boom\nsecond line\x9b2J'],
      ['none', null],
    ]);
    expect(text).toBe(
      'key:        k\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07\n' +
        'last error: boom\\nsecond line\\x9b2J\n' +
        'none:       -\n',
    );
  });

  it('JSON output escapes C1 controls too, and still parses to the same value', () => {
    let out = '';
    const io: CliIo = { out: { write: (s: string) => ((out += s), true) }, err: process.stderr, isTTY: false, env: {} };
    const value = { key: `k\x1b]0;t\x07\x9b2J\u202e\u2028\x7f` };
    writeJson(io, value);
    expect(out).not.toMatch(RAW_CONTROL);
    expect(out).not.toMatch(/[\u2028\u202e]/);
    expect(out.endsWith('\n')).toBe(true);
    expect(JSON.parse(out)).toEqual(value);
  });
});
