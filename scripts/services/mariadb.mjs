import { existsSync, mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { run, talk, target, which } from './tools.mjs';

/** MariaDB: mariadb-admin ping (or its greeting), started with start-stop-daemon; creates the test database. */
export function mariadb() {
  const t = target('SURETY_TEST_MYSQL_URL', 'mysql://root@127.0.0.1:3306/test');
  const env = { MYSQL_PWD: t.password };
  const conn = [`-h${t.host}`, `-P${t.port}`, `-u${t.user || 'root'}`, '--protocol=TCP', '--connect-timeout=3'];
  const daemon = '/usr/sbin/mariadbd';
  const ssd = which('start-stop-daemon');
  return {
    name: 'mariadb',
    target: t,
    deadlineMs: 60_000,
    async probe() {
      const admin = which('mariadb-admin', 'mysqladmin');
      // `ping` exits 0 whenever the server answers, even if the credentials are refused.
      if (admin) return (await run(admin, [...conn, 'ping'], { env })).ok ? 'up' : 'down';
      // Without the CLI: the server greets every new connection with a handshake (or an error) packet.
      return (await talk(t.host, t.port)) ? 'up' : 'down';
    },
    installHint: 'apt-get install -y mariadb-server',
    logHint: '/var/log/mysql/error.log',
    start:
      existsSync(daemon) && ssd
        ? { file: ssd, args: ['--start', '--oknodo', '--background', '--exec', daemon] }
        : undefined,
    beforeStart() {
      // Debian's init script creates the socket and pid folder; /run is emptied on reboot.
      if (!existsSync('/run/mysqld') && userInfo().uid === 0) {
        mkdirSync('/run/mysqld', { recursive: true });
        return run('chown', ['mysql:mysql', '/run/mysqld']);
      }
    },
    async ensureDatabase() {
      const client = which('mariadb', 'mysql');
      if (!client) return `database ${t.database} not checked: mariadb client not found`;
      const sql = (q) => run(client, [...conn, '-N', '-e', q], { env });
      if ((await sql(`SHOW DATABASES LIKE '${t.database}'`)).output === t.database) return undefined;
      const created = await sql(`CREATE DATABASE IF NOT EXISTS \`${t.database}\``);
      if (created.ok) return `created database ${t.database}`;
      throw new Error(`${this.name}: up, but could not create database ${t.database}: ${created.output}`);
    },
  };
}
