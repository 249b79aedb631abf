import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { testEnv, uniqueName } from '../support/env.js';
import { runCli as run } from './cli-harness.js';

describe('surety migrate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'surety-cli-'));
  const schema = uniqueName('cli');
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    const pool = new pg.Pool({ connectionString: testEnv.postgresUrl });
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('migrates SQLite idempotently', async () => {
    const url = `sqlite:${join(dir, 'app.sqlite')}`;
    const first = await run(['migrate', '--database', url, '--json']);
    expect(first.code, first.err).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({ command: 'migrate', dialect: 'sqlite', ok: true });
    expect((await run(['migrate', '--database', url])).code).toBe(0);
  });

  it('migrates PostgreSQL into a schema, and hides the password in output', async () => {
    const url = testEnv.postgresUrl.replace('postgres://postgres@', 'postgres://postgres:secret@');
    const res = await run(['migrate', '--database', url, '--schema', schema]);
    expect(res.code, res.err).toBe(0);
    expect(res.out).toContain(`"${schema}"."surety_outbox"`);
    expect(res.out).not.toContain('secret');
    const pool = new pg.Pool({ connectionString: testEnv.postgresUrl });
    const { rows } = await pool.query(
      'SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1',
      [schema],
    );
    await pool.end();
    expect(rows[0].n).toBeGreaterThanOrEqual(3);
  });

  it('rejects bad usage with a specific message and exit code 2', async () => {
    expect(await run([])).toMatchObject({ code: 2 });
    expect(await run(['frobnicate'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown command "frobnicate"'),
    });
    expect(await run(['migrate'])).toMatchObject({ code: 2, err: expect.stringContaining('--database') });
    expect(await run(['migrate', '--database', 'oracle://x:pw@h/db'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/unsupported URL "oracle:\/\/x:\*\*\*@h\/db"/),
    });
    expect(
      await run(['migrate', '--database', `sqlite:${join(dir, 'x.sqlite')}`, '--table-prefix', 'bad-prefix!']),
    ).toMatchObject({
      code: 2,
      err: expect.stringContaining('tablePrefix'),
    });
    expect(await run(['migrate', '--bogus'])).toMatchObject({ code: 2, err: expect.stringContaining('--bogus') });
  });

  it('fails with exit code 1 when the database is unreachable', async () => {
    const res = await run(['migrate', '--database', 'postgres://postgres@127.0.0.1:1/none']);
    expect(res.code).toBe(1);
    expect(res.err).toMatch(/SURETY_MIGRATION_FAILED|ECONNREFUSED/);
  });
});
