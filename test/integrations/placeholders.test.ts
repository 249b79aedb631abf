import { describe, expect, it } from 'vitest';
import { splitPlaceholders } from '../../src/integrations/shared/placeholders.js';

describe('splitPlaceholders', () => {
  it('binds each PostgreSQL $n occurrence in text order, repeated or out of order', () => {
    expect(splitPlaceholders('postgres', 'SELECT $2, $1 WHERE a = $2', ['one', 'two'])).toEqual({
      parts: ['SELECT ', ', ', ' WHERE a = ', ''],
      values: ['two', 'one', 'two'],
    });
  });

  it('leaves placeholders inside quoted literals and identifiers alone', () => {
    expect(splitPlaceholders('postgres', `SELECT '$1', "$1", 'it''s $1' FROM t WHERE x = $1`, [7])).toEqual({
      parts: [`SELECT '$1', "$1", 'it''s $1' FROM t WHERE x = `, ''],
      values: [7],
    });
    expect(splitPlaceholders('mysql', "SELECT '?', `a?b`, 'don\\'t ?' WHERE x = ? AND y = ?", [1, 2])).toEqual({
      parts: ["SELECT '?', `a?b`, 'don\\'t ?' WHERE x = ", ' AND y = ', ''],
      values: [1, 2],
    });
  });

  it('gives text without placeholders as one part', () => {
    expect(splitPlaceholders('sqlite', 'SELECT 1', [])).toEqual({ parts: ['SELECT 1'], values: [] });
  });
});
