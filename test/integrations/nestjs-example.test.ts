import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEnv, uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);

// examples/nestjs as its own process, on a PostgreSQL database and a RabbitMQ vhost of its own.
describe('the NestJS example', () => {
  const database = uniqueName('nestjs_example');
  const vhost = uniqueName('nestjs_example');
  const databaseUrl = Object.assign(new URL(testEnv.postgresUrl), { pathname: `/${database}` }).toString();
  const children = new Set<ChildProcess>();

  async function query(url: string, text: string): Promise<Record<string, unknown>[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    await query(testEnv.postgresUrl, `CREATE DATABASE ${database}`);
    await run('rabbitmqctl', ['add_vhost', vhost], { timeout: 60_000 });
    await run('rabbitmqctl', ['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*'], { timeout: 60_000 });
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await run('rabbitmqctl', ['delete_vhost', vhost], { timeout: 60_000 }).catch(() => undefined);
    await query(testEnv.postgresUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it('starts, invoices each order once through the decorated handler, dead-letters a permanent failure, and exits 0 on SIGTERM', async () => {
    const child = spawnTs('../examples/nestjs/main.ts', {
      DATABASE_URL: databaseUrl,
      AMQP_URL: `${testEnv.amqpUrl.replace(/\/+$/, '')}/${vhost}`,
      PORT: '0',
      SURETY_LOG_LEVEL: 'info',
    });
    children.add(child);
    const end = exited(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));

    await waitFor(
      'the service to listen',
      () => /listening on http:\/\/\S+/.test(out) || child.exitCode !== null,
      60_000,
    );
    const base = /listening on (http:\/\/\S+)/.exec(out)?.[1];
    expect(
      base,
      `no address; the process ended: ${JSON.stringify(await Promise.race([end, 'running']))}`,
    ).toBeDefined();

    const post = (body: unknown) =>
      fetch(`${base}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ total: 'lots' })).status).toBe(400);
    const ids: string[] = [];
    for (const total of [12, 30]) {
      const res = await post({ total });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const refused = (await (await post({ total: -1 })).json()) as { id: string };

    const invoices = async () => query(databaseUrl, 'SELECT order_id, total FROM invoices ORDER BY total');
    await waitFor('both invoices', async () => (await invoices()).length === 2);
    expect(await invoices()).toEqual([
      { order_id: ids[0], total: 12 },
      { order_id: ids[1], total: 30 },
    ]);
    const deadLetter = async () => query(databaseUrl, `SELECT message_id, group_name, status FROM surety_dead_letters`);
    await waitFor('the negative order as a dead letter', async () => (await deadLetter()).length === 1);
    const [dead] = await deadLetter();
    expect(dead).toMatchObject({ group_name: 'billing', status: 'dead' });
    const unsent = async () =>
      (await query(databaseUrl, `SELECT count(*)::int AS n FROM surety_outbox WHERE status <> 'sent'`))[0]!.n;
    await waitFor('every outbox row marked sent', async () => (await unsent()) === 0);
    expect(out).toContain(`invoiced order ${ids[0]}`);
    expect(out).not.toContain(`invoiced order ${refused.id}`);

    child.kill('SIGTERM');
    // A connection left open would keep the process alive: give it 30 s to end by itself.
    await waitFor(
      'the process to exit after SIGTERM',
      () => child.exitCode !== null || child.signalCode !== null,
      30_000,
    );
    const result = await end;
    children.delete(child);
    // Code 0, not death by the signal: the process ended by itself once nothing was left running.
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
    expect(result.stderr).toContain('outbox relay stopped');
    // The one error logged is the expected dead letter: nothing failed while stopping.
    const errors = result.stderr
      .split('\n')
      .filter((line) => /"level":[56]0|ERROR/.test(line))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(errors).toEqual(['message is dead; an operator must act']);
    // Its connections are gone from the server too.
    const sessions = await query(
      testEnv.postgresUrl,
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${database}'`,
    );
    expect(sessions).toEqual([{ n: 0 }]);
  });
});
