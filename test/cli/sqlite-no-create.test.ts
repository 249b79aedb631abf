/**
 * Only `migrate` (and `start --migrate`) may create a SQLite database. Every other command against a
 * path with no file, or a file without Surety's tables, creates nothing and says to run migrate.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-harness.js';

const MESSAGE = '0194b7a0-0000-7000-8000-00000000abcd';
const READS = [
  ['dlq', 'list'],
  ['dlq', 'show', '1'],
  ['outbox', 'list'],
  ['outbox', 'show', MESSAGE],
  ['audit'],
  ['dlq', 'replay', '1'],
  ['outbox', 'resend', MESSAGE],
];

describe('CLI commands on a SQLite path that is not a Surety database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'surety-nocreate-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(READS.map((args) => [args.join(' '), args] as const))(
    '%s creates no file and says to run migrate',
    async (_name, args) => {
      const path = join(dir, `missing-${args.join('-')}.sqlite`);
      const res = await runCli([...args, '--database', `sqlite:${path}`]);
      expect(res.code, res.err).toBe(1);
      expect(res.err).toBe(
        `surety: SURETY_NOT_MIGRATED: SQLite: no database file at "${path}" (none was created); run \`surety migrate\` to create the tables\n`,
      );
      expect(existsSync(path)).toBe(false);
    },
  );

  it('a file without Surety tables is left as it is', async () => {
    const path = join(dir, 'other-app.sqlite');
    const other = new Database(path);
    other.exec('CREATE TABLE invoices (id INTEGER PRIMARY KEY)');
    other.close();
    const before = readFileSync(path);
    const res = await runCli(['dlq', 'list', '--database', `sqlite:${path}`]);
    expect(res.code).toBe(1);
    expect(res.err).toBe(
      `surety: SURETY_NOT_MIGRATED: SQLite: "${path}" holds no Surety tables (prefix surety_); run \`surety migrate\` to create the tables\n`,
    );
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('the doctor reports it as a finding, naming migrate; migrate creates it, and then reads work', async () => {
    const path = join(dir, 'fresh.sqlite');
    const doctor = await runCli(['doctor', '--database', `sqlite:${path}`]);
    expect(doctor.code, doctor.err).toBe(4);
    expect(doctor.out).toMatch(/^verdict: producer: the database has no Surety tables: SQLite: no database file at /m);
    expect(doctor.out).toMatch(/^next step: create the tables with `surety migrate`/m);
    expect(existsSync(path)).toBe(false);

    expect((await runCli(['migrate', '--database', `sqlite:${path}`])).code).toBe(0);
    expect(await runCli(['dlq', 'list', '--database', `sqlite:${path}`])).toEqual({
      code: 0,
      out: 'no dead letter matches\n',
      err: '',
    });
  });
});
