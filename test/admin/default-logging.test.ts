/**
 * One logging default for every component given no logger: JSON lines on stderr at info
 * (SURETY_LOG_LEVEL), nothing on stdout. Checked in a child process, whose real stderr and stdout
 * are what an operator sees.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, spawnTs } from '../support/spawn.js';

interface Line {
  readonly level: number;
  readonly name: string;
  readonly msg: string;
}

describe('default logging', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const parse = (stderr: string) =>
    stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);

  const run = async (env: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'surety-logs-'));
    dirs.push(dir);
    const end = await exited(spawnTs('support/default-logging-process.ts', { SURETY_DIR: dir, ...env }));
    expect(end.code, end.stderr).toBe(0);
    return end;
  };

  it('relay, consumer and admin server write JSON lines to stderr at info, nothing to stdout', async () => {
    // Unset (empty), as for a user: the suite itself runs at warn.
    const { stdout, stderr } = await run({ SURETY_FAILURES: '9', SURETY_LOG_LEVEL: '' });
    expect(stdout).toBe('');
    const lines = parse(stderr);
    const failed = lines.filter((l) => l.name === 'surety-consumer' && /failed/.test(l.msg));
    expect(failed).toHaveLength(9);
    expect(failed.every((l) => l.level === 40)).toBe(true);
    expect(lines).toContainEqual(expect.objectContaining({ name: 'surety-relay', msg: 'outbox relay started' }));
    expect(lines).toContainEqual(
      expect.objectContaining({ name: 'surety-admin', level: 40, msg: 'admin login refused: unknown token' }),
    );
    // Info is the default: no debug line (the admin server logs every request at debug).
    expect(lines.filter((l) => l.level < 30)).toEqual([]);
  });

  it('SURETY_LOG_LEVEL sets the level of every default logger', async () => {
    const { stdout, stderr } = await run({ SURETY_FAILURES: '2', SURETY_LOG_LEVEL: 'warn' });
    expect(stdout).toBe('');
    const lines = parse(stderr);
    expect(lines.map((l) => [l.name, l.level])).toEqual([
      ['surety-consumer', 40],
      ['surety-consumer', 40],
      ['surety-admin', 40],
    ]);
  });
});
