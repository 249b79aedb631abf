import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { run, talk, target, which } from './tools.mjs';

/** PostgreSQL: pg_isready (or a startup message), started with pg_ctlcluster; creates the test database. */
export function postgres() {
  const t = target('SURETY_TEST_PG_URL', 'postgres://postgres@127.0.0.1:5432/test');
  const env = { PGPASSWORD: t.password, PGCONNECT_TIMEOUT: '3' };
  const conn = ['-h', t.host, '-p', String(t.port), '-U', t.user || 'postgres'];
  const versions = existsSync('/etc/postgresql')
    ? readdirSync('/etc/postgresql')
        .filter((v) => existsSync(join('/etc/postgresql', v, 'main')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const ctl = which('pg_ctlcluster');
  return {
    name: 'postgres',
    target: t,
    deadlineMs: 60_000,
    async probe() {
      const isready = which('pg_isready');
      if (isready) {
        // 0 accepting, 1 rejecting (still starting), 2 no response.
        const r = await run(isready, [...conn, '-d', 'postgres', '-t', '3'], { env });
        return r.code === 0 ? 'up' : r.code === 1 ? 'starting' : 'down';
      }
      // Without the CLI: a startup message is answered by an auth request ('R') or an error ('E');
      // SQLSTATE 57P03 in the error means the server is still starting.
      const params = Buffer.from(`user\0${t.user || 'postgres'}\0database\0postgres\0\0`);
      const msg = Buffer.alloc(8 + params.length);
      msg.writeInt32BE(msg.length, 0);
      msg.writeInt32BE(196608, 4); // protocol 3.0
      params.copy(msg, 8);
      const reply = await talk(t.host, t.port, msg, (r) => r.length >= 5 && r.length >= 1 + r.readInt32BE(1));
      if (!reply) return 'down';
      if (reply[0] === 0x45 && reply.includes('57P03')) return 'starting';
      return reply[0] === 0x52 || reply[0] === 0x45 ? 'up' : 'down';
    },
    installHint: 'apt-get install -y postgresql',
    logHint: '/var/log/postgresql/',
    start:
      ctl && versions[0] ? { file: ctl, args: ['--skip-systemctl-redirect', versions[0], 'main', 'start'] } : undefined,
    async ensureDatabase() {
      const psql = which('psql');
      if (!psql) return `database ${t.database} not checked: psql not found`;
      const sql = (q) => run(psql, [...conn, '-d', 'postgres', '-Atc', q], { env });
      const exists = async () =>
        (await sql(`SELECT 1 FROM pg_database WHERE datname = '${t.database}'`)).output === '1';
      if (await exists()) return undefined;
      const created = await sql(`CREATE DATABASE "${t.database}"`);
      // A concurrent run may have created it first.
      if (created.ok || (await exists())) return `created database ${t.database}`;
      throw new Error(`${this.name}: up, but could not create database ${t.database}: ${created.output}`);
    },
  };
}
