import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cluster = () => readdirSync('/etc/postgresql')[0]!;

/** Stops the local PostgreSQL cluster for real (fast shutdown: connections are cut). */
export async function stopPostgres(): Promise<void> {
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', cluster(), 'main', 'stop', '-m', 'fast'], {
    timeout: 60_000,
  });
}

async function ready(): Promise<boolean> {
  return run('pg_isready', ['-h', '127.0.0.1', '-q'], { timeout: 5_000 }).then(
    () => true,
    () => false,
  );
}

/** Starts the cluster unless it already answers, then waits until it does. */
export async function startPostgres(): Promise<void> {
  if (await ready()) return;
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', cluster(), 'main', 'start'], { timeout: 60_000 });
  for (let i = 0; i < 240; i++) {
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('PostgreSQL did not come back');
}
