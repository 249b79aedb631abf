// Checks one service and, when it is the machine's own and down, starts it and waits until it answers.
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { plainName, POLL_MS, run, sleep } from './tools.mjs';

function describe(svc) {
  const { host, port, envName } = svc.target;
  const source = process.env[envName] ? `from ${envName}` : `the default; ${envName} overrides it`;
  return `${svc.name} at ${host}:${port} (${source})`;
}

function failure(svc, tried) {
  const lines = [`${svc.name}: NOT AVAILABLE at ${svc.target.host}:${svc.target.port}`, `  tried: ${tried}`];
  if (svc.target.managed) {
    lines.push(`  install: ${svc.installHint}`);
    if (svc.start)
      lines.push(
        `  start:   ${typeof svc.start === 'function' ? svc.startHint : [svc.start.file, ...svc.start.args].join(' ')}`,
      );
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
export async function ensure(svc) {
  const begun = Date.now();
  const state = await svc.probe();
  // A service that answers, but not as the tests need (NATS without JetStream): say what is wrong, start nothing.
  if (!['up', 'starting', 'down'].includes(state)) throw new Error(failure(svc, svc.explain?.(state) ?? state));
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
        const command = typeof svc.start === 'function' ? svc.startHint : [svc.start.file, ...svc.start.args].join(' ');
        // A service that needs more than one command to start (Kafka) gives a function instead.
        const startOnce =
          typeof svc.start === 'function'
            ? () => svc.start()
            : () => run(svc.start.file, svc.start.args, { timeoutMs: svc.deadlineMs });
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
