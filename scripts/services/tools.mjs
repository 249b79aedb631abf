// Shared by the service checks of ensure-services.mjs: finding commands, running them, talking a protocol's first
// bytes, and where each service is expected.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export const POLL_MS = 500;
export const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const SEARCH_PATH = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/local/sbin'];
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Absolute path of an executable found on PATH (or in the sbin folders), else undefined. */
export function which(...names) {
  for (const name of names) {
    for (const dir of SEARCH_PATH) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  return undefined;
}

let scratch;
let runs = 0;

/** Removes this run's scratch files (command output captured by run()). */
export function cleanScratch() {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
}

function scratchFile(name) {
  scratch ??= mkdtempSync(join(tmpdir(), 'surety-services-'));
  return join(scratch, name);
}

/** Runs a command to completion; never throws. Output goes to a file so a daemon it forks cannot hold our pipes open. */
export function run(file, args, { env, timeoutMs = 10_000 } = {}) {
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
export function talk(host, port, hello, complete = (reply) => reply.length >= 7, timeoutMs = 2_000) {
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

export function target(envName, fallback) {
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
export const plainName = (name) => /^[A-Za-z0-9_]+$/.test(name);
