#!/usr/bin/env node
// Makes sure the services the test suites talk to are answering, starting local ones that are installed but down.
// Run by `npm test` and `npm run bench`; see DEVELOPERS.md.
//
//   SURETY_SERVICES=postgres,mariadb,rabbitmq   which services to check (default: all three)
//   SURETY_SKIP_SERVICES=1                      skip every check (tests point at hosts you manage yourself)
//   SURETY_TEST_PG_URL / SURETY_TEST_MYSQL_URL / SURETY_TEST_AMQP_URL   where the tests connect; checked here too
//   SURETY_CHROMIUM                             the browser the console's tests drive (default /usr/bin/chromium);
//                                               only reported here, never installed
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, join } from 'node:path';

const POLL_MS = 500;
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const SEARCH_PATH = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/local/sbin'];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Absolute path of an executable found on PATH (or in the sbin folders), else undefined. */
function which(...names) {
  for (const name of names) {
    for (const dir of SEARCH_PATH) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  return undefined;
}

let scratch;
let runs = 0;
function scratchFile(name) {
  scratch ??= mkdtempSync(join(tmpdir(), 'surety-services-'));
  return join(scratch, name);
}

/** Runs a command to completion; never throws. Output goes to a file so a daemon it forks cannot hold our pipes open. */
function run(file, args, { env, timeoutMs = 10_000 } = {}) {
  return new Promise((resolve) => {
    const out = scratchFile(`run-${(runs += 1)}.log`);
    const fd = openSync(out, 'w');
    const child = spawn(file, args, {
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ...env },
      timeout: timeoutMs,
    });
    closeSync(fd);
    let settled = false;
    const finish = (code) => {
      if (settled) return;
      settled = true;
      const output = readFileSync(out, 'utf8').trim();
      rmSync(out, { force: true });
      resolve({ ok: code === 0, code, output });
    };
    child.once('error', () => finish(-1));
    child.once('exit', (code) => finish(code ?? -1));
  });
}

/** Opens a TCP connection, optionally writes `hello`, and resolves with the first reply received (or null). */
function talk(host, port, hello, complete = (reply) => reply.length >= 7, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    const socket = connect({ host: host.replace(/^\[|\]$/g, ''), port });
    let received = Buffer.alloc(0);
    const done = (value) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(received.length ? received : null));
    socket.on('error', () => done(null));
    socket.on('connect', () => hello && socket.write(hello));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (complete(received)) done(received);
    });
    socket.on('end', () => done(received.length ? received : null));
  });
}

function target(envName, fallback) {
  const url = new URL(process.env[envName] || fallback);
  const defaultPort = Number(new URL(fallback).port);
  return {
    envName,
    url,
    host: url.hostname,
    port: Number(url.port || defaultPort),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.replace(/^\//, '')),
    // Only the machine's own service on its standard port is ever started by this script.
    managed: LOCAL_HOSTS.has(url.hostname) && Number(url.port || defaultPort) === defaultPort,
  };
}

// Database names go into SQL text, so only plain identifiers are accepted.
const plainName = (name) => /^[A-Za-z0-9_]+$/.test(name);

function postgres() {
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

function mariadb() {
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

function rabbitmq() {
  const t = target('SURETY_TEST_AMQP_URL', 'amqp://guest:guest@127.0.0.1:5672');
  const server = which('rabbitmq-server');
  const diagnostics = which('rabbitmq-diagnostics');
  return {
    name: 'rabbitmq',
    target: t,
    deadlineMs: 90_000,
    async probe() {
      // An AMQP 0-9-1 protocol header is answered with a Connection.Start method frame (type 1).
      const reply = await talk(t.host, t.port, Buffer.from('AMQP\x00\x00\x09\x01', 'latin1'));
      if (!reply || reply[0] !== 1) return 'down';
      if (!t.managed || !diagnostics) return 'up';
      // The listener opens late in boot; the node's own check confirms it finished booting.
      return (await run(diagnostics, ['-q', 'check_running'], { timeoutMs: 20_000 })).ok ? 'up' : 'starting';
    },
    installHint: 'apt-get install -y rabbitmq-server',
    logHint: '/var/log/rabbitmq/',
    start: server ? { file: server, args: ['-detached'] } : undefined,
  };
}

const SERVICES = { postgres, mariadb, mysql: mariadb, rabbitmq };

function describe(svc) {
  const { host, port, envName } = svc.target;
  const source = process.env[envName] ? `from ${envName}` : `the default; ${envName} overrides it`;
  return `${svc.name} at ${host}:${port} (${source})`;
}

function failure(svc, tried) {
  const lines = [`${svc.name}: NOT AVAILABLE at ${svc.target.host}:${svc.target.port}`, `  tried: ${tried}`];
  if (svc.target.managed) {
    lines.push(`  install: ${svc.installHint}`);
    if (svc.start) lines.push(`  start:   ${[svc.start.file, ...svc.start.args].join(' ')}`);
    lines.push(`  logs:    ${svc.logHint}`);
  } else {
    lines.push(
      `  ${svc.target.envName} points away from the local default, so nothing was started: start it yourself.`,
    );
  }
  lines.push('  or set SURETY_SERVICES to the services you need, or SURETY_SKIP_SERVICES=1 to skip these checks.');
  return lines.join('\n');
}

async function waitUntilUp(svc, deadline, retry) {
  const retryAt = Date.now() + (deadline - Date.now()) / 2;
  let state = await svc.probe();
  while (state !== 'up' && Date.now() < deadline) {
    await sleep(POLL_MS);
    state = await svc.probe();
    // A start issued while an old process was still shutting down is a no-op; try once more.
    if (retry && state === 'down' && Date.now() >= retryAt) {
      await retry();
      retry = undefined;
    }
  }
  return state === 'up';
}

/**
 * Lets one run at a time start a service (two mariadbd on one data folder fight over its locks).
 * Returns a release function, or undefined while a live process holds the lock.
 */
function takeStartLock(name, staleMs) {
  const file = join(tmpdir(), `surety-start-${name}.lock`);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if (error.code !== 'EEXIST') return () => {};
    }
    try {
      const holder = Number(readFileSync(file, 'utf8'));
      const fresh = Date.now() - statSync(file).mtimeMs < staleMs;
      if (fresh && holder && isAlive(holder)) return undefined;
      rmSync(file, { force: true });
    } catch {
      // Released between our two looks: try again.
    }
  }
  return undefined;
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Resolves with the status line; rejects with a multi-line explanation. */
async function ensure(svc) {
  const begun = Date.now();
  const state = await svc.probe();
  let how = 'already running';
  if (state === 'starting') {
    if (!(await waitUntilUp(svc, begun + svc.deadlineMs))) {
      throw new Error(failure(svc, `waited ${svc.deadlineMs / 1000}s for ${describe(svc)} to finish starting`));
    }
    how = `finished starting in ${((Date.now() - begun) / 1000).toFixed(1)}s`;
  } else if (state === 'down') {
    if (!svc.target.managed) throw new Error(failure(svc, `connecting to ${describe(svc)}`));
    if (!svc.start) throw new Error(failure(svc, `connecting to ${describe(svc)}; it does not look installed here`));
    const release = takeStartLock(svc.name, svc.deadlineMs);
    if (!release) {
      if (!(await waitUntilUp(svc, begun + svc.deadlineMs))) {
        throw new Error(failure(svc, `waiting ${svc.deadlineMs / 1000}s while another run was starting it`));
      }
      how = `started by another run, up in ${((Date.now() - begun) / 1000).toFixed(1)}s`;
    } else {
      try {
        await svc.beforeStart?.();
        const command = [svc.start.file, ...svc.start.args].join(' ');
        const startOnce = () => run(svc.start.file, svc.start.args, { timeoutMs: svc.deadlineMs });
        // A non-zero exit can mean it was started a moment ago by other means, so wait for the deadline either way.
        const started = await startOnce();
        if (!started.ok && userInfo().uid !== 0) {
          throw new Error(
            failure(svc, `\`${command}\` as a non-root user; it exited ${started.code}: ${started.output}`),
          );
        }
        if (!(await waitUntilUp(svc, begun + svc.deadlineMs, startOnce))) {
          const note = started.ok
            ? ''
            : `; it exited ${started.code}: ${started.output.split('\n').slice(-5).join(' | ')}`;
          throw new Error(failure(svc, `\`${command}\`, then waited ${svc.deadlineMs / 1000}s${note}`));
        }
      } finally {
        release();
      }
      how = `started in ${((Date.now() - begun) / 1000).toFixed(1)}s`;
    }
  }
  const dbNote = plainName(svc.target.database)
    ? await svc.ensureDatabase?.()
    : svc.ensureDatabase && `database name ${JSON.stringify(svc.target.database)} not checked`;
  return `${svc.name}: up (${how}${dbNote ? `; ${dbNote}` : ''})`;
}

/** The console's browser tests need Chromium: say whether it is there. Reported only; .ci/run installs it. */
async function reportChromium() {
  const path = process.env.SURETY_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(path)) {
    const ci = /^(1|true|yes)$/i.test(process.env.CI ?? '');
    console.log(
      `chromium: not found at ${path}; the browser tests will ${ci ? 'FAIL (CI is set)' : 'be skipped'}. Install: apt-get install chromium`,
    );
    return;
  }
  const r = await run(path, ['--version'], { timeoutMs: 15_000 });
  const version = r.output.split('\n').find((line) => /chrom/i.test(line) && !line.startsWith(path));
  console.log(`chromium: ${path}${version ? ` (${version.trim()})` : ''}`);
}

async function main() {
  await reportChromium();
  if (/^(1|true|yes)$/i.test(process.env.SURETY_SKIP_SERVICES ?? '')) {
    console.log('services: check skipped (SURETY_SKIP_SERVICES is set)');
    return 0;
  }
  const names = (process.env.SURETY_SERVICES ?? 'postgres,mariadb,rabbitmq')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (!names.length) {
    console.log('services: none requested (SURETY_SERVICES is empty)');
    return 0;
  }
  const unknown = names.filter((n) => !(n in SERVICES));
  if (unknown.length) {
    console.error(
      `SURETY_SERVICES: unknown service ${unknown.join(', ')}; allowed: postgres, mariadb (or mysql), rabbitmq`,
    );
    return 2;
  }
  let services;
  try {
    services = [...new Set(names.map((n) => SERVICES[n]))].map((make) => make());
  } catch (error) {
    console.error(`services: bad connection URL: ${error.message}`);
    return 2;
  }
  // Check (and start) all at once; report in the order given.
  const results = services.map((svc) =>
    ensure(svc).then(
      (line) => ({ line }),
      (error) => ({ error }),
    ),
  );
  let failed = 0;
  for (const result of results) {
    const { line, error } = await result;
    if (error) {
      failed += 1;
      console.error(error.message);
    } else {
      console.log(line);
    }
  }
  return failed ? 1 : 0;
}

try {
  process.exitCode = await main();
} finally {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
