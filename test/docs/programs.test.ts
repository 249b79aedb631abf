import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/admin/doctor/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRabbitMqQueueProbe } from '../../src/transports/rabbitmq/index.js';
import { docPrograms, documentationPages, writePrograms, type DocProgram } from '../support/doc-programs.js';
import { testEnv, uniqueName } from '../support/env.js';
import { exited } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';

// The front door must work: every complete program of README.md and docs/*.md (a TypeScript block with an import) is
// type-checked and run as written. Only where it connects changes: its own PostgreSQL databases and RabbitMQ vhost,
// through the environment variables the programs read.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const programs = docPrograms(root, documentationPages(root));

interface Env {
  readonly DATABASE_URL: string;
  readonly BILLING_DATABASE_URL: string;
  readonly AMQP_URL: string;
  /** Servers listen on a free port. */
  readonly PORT: string;
  readonly OPS_TOKEN: string;
}

/** A started program: its output so far, and a way to stop it as an operator would. */
interface Running {
  readonly child: ChildProcess;
  readonly out: () => string;
  /** What it wrote to stderr so far. */
  readonly err: () => string;
  /** Its exit, with everything it wrote to stderr. */
  readonly ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  /** SIGTERM, then the exit; fails (and kills it) when it does not exit within `ms`. */
  stop(ms?: number): Promise<{ code: number | null; stderr: string }>;
}

/** How a program that runs until it is stopped is run; every other program must exit 0 on its own. */
interface Scenario {
  readonly title: string;
  readonly programs: readonly string[];
  run(start: (name: string) => Running, env: Env): Promise<void>;
}

const scenarios: Scenario[] = [
  {
    title: 'the README producer and consumer: each order invoiced once, then both stop cleanly on SIGTERM',
    programs: ['README.md#producer.ts', 'README.md#consumer.ts'],
    async run(start, env) {
      const consumer = start('README.md#consumer.ts');
      const producer = start('README.md#producer.ts');
      const invoiced = () => [...consumer.out().matchAll(/invoicing order ([0-9a-f-]{36})/g)].map((m) => m[1]!);
      const alive = () => {
        for (const [name, p] of [
          ['consumer', consumer],
          ['producer', producer],
        ] as const)
          if (p.child.exitCode !== null) throw new Error(`the ${name} exited with code ${p.child.exitCode}`);
        return true;
      };
      await waitFor('two invoices', () => alive() && invoiced().length >= 2, 60_000).catch((error: Error) => {
        throw new Error(`${error.message}\nconsumer: ${consumer.err()}\nproducer: ${producer.err()}`);
      });
      // While both run, the doctor has nothing against the README's topology (it once set a delivery limit it warned about).
      const store = await createPostgresStore({ connectionString: env.BILLING_DATABASE_URL });
      const probe = createRabbitMqQueueProbe({ url: env.AMQP_URL });
      try {
        const report = await runDoctor({ store, probe, knownQueues: ['billing'] });
        const broker = report.checks.filter((c) => c.place === 'broker');
        expect(broker.length).toBeGreaterThan(0);
        expect(broker.filter((c) => c.level !== 'ok')).toEqual([]);
      } finally {
        await probe.close?.();
        await store.close();
      }
      const [p, c] = await Promise.all([producer.stop(), consumer.stop()]);
      expect(p, p.stderr).toMatchObject({ code: 0 });
      expect(c, c.stderr).toMatchObject({ code: 0 });

      const orders = await query(env.DATABASE_URL, 'SELECT id::text FROM orders');
      const invoices = await query(env.BILLING_DATABASE_URL, 'SELECT order_id::text AS id FROM invoices');
      const orderIds = new Set(orders.map((r) => r.id));
      expect(invoices.length).toBeGreaterThanOrEqual(2);
      for (const { id } of invoices) expect(orderIds.has(id)).toBe(true);
      // Each invoiced order's event was marked sent, on the broker's confirm.
      const sent = await query(
        env.DATABASE_URL,
        `SELECT count(*)::int AS n FROM surety_outbox WHERE status = 'sent' AND msg_key = ANY($1::text[])`,
        [invoices.map((r) => r.id)],
      );
      expect(sent[0]!.n).toBe(invoices.length);
    },
  },
  {
    title: 'the console over two databases: serves the API with the operator token, then stops cleanly on SIGTERM',
    programs: ['docs/operations.md#console.ts'],
    async run(start, env) {
      for (const url of [env.DATABASE_URL, env.BILLING_DATABASE_URL]) {
        const store = await createPostgresStore({ connectionString: url });
        await store.migrate();
        await store.close();
      }
      const server = start('docs/operations.md#console.ts');
      let base: string | undefined;
      await waitFor('the console address', () => {
        if (server.child.exitCode !== null) throw new Error(`the console exited: ${server.err()}`);
        base = /Operations console: (http:\S+)/.exec(server.out())?.[1];
        return base !== undefined;
      });
      const api = (path: string, token = env.OPS_TOKEN) =>
        fetch(new URL(`api/${path}`, base), { headers: { authorization: `Bearer ${token}` } });
      expect((await api('stores', 'wrong-token-of-enough-length')).status).toBe(401);
      const stores = (await (await api('stores')).json()) as { stores: { name: string }[] };
      expect(stores.stores.map((s) => s.name)).toEqual(['orders', 'billing']);
      expect((await api('overview')).status).toBe(200);
      expect(await server.stop()).toMatchObject({ code: 0 });
    },
  },
];

/**
 * The Prisma schemas of the pages (a `prisma` block naming its file in its first comment, as docs/integrations/prisma.md's
 * `schema.prisma`), written beside the programs and generated as the page tells its reader: a program then imports
 * the client from where the schema's `output` put it.
 */
async function generatePrismaClients(dir: string): Promise<void> {
  const cli = join(root, 'node_modules', 'prisma', 'build', 'index.js');
  // As test/integrations/prisma/generate.mjs: naming a schema engine skips a download `generate` does not need.
  const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', PRISMA_SCHEMA_ENGINE_BINARY: process.execPath };
  for (const page of documentationPages(root)) {
    for (const [, schema] of readFileSync(join(root, page), 'utf8').matchAll(/^```prisma\n([\s\S]*?)^```$/gm)) {
      const name = /^\/\/\s*([\w.-]+\.prisma):/.exec(schema!)?.[1];
      if (!name) throw new Error(`${page}: a prisma block names its file in its first comment`);
      const file = join(dir, name);
      if (existsSync(file)) throw new Error(`${page}: another page's ${name} is already there`);
      writeFileSync(file, schema!);
      await run(process.execPath, [cli, 'generate', '--schema', file], { cwd: dir, env, timeout: 120_000 });
    }
  }
}

async function query(url: string, text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

describe('the programs of README.md and docs/', () => {
  const dir = join(root, '.scratch', uniqueName('doc_programs'));
  const databases = [uniqueName('docs_orders'), uniqueName('docs_billing')];
  const vhost = uniqueName('docs');
  const children = new Set<ChildProcess>();
  let files: Map<string, string>;
  let env: Env;

  // Prisma's generator and rabbitmqctl are slow on a loaded machine.
  beforeAll(async () => {
    files = writePrograms(root, dir, programs);
    await generatePrismaClients(dir);
    for (const db of databases) await query(testEnv.postgresUrl, `CREATE DATABASE ${db}`);
    await run('rabbitmqctl', ['add_vhost', vhost], { timeout: 60_000 });
    await run('rabbitmqctl', ['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*'], { timeout: 60_000 });
    const db = (name: string) => Object.assign(new URL(testEnv.postgresUrl), { pathname: `/${name}` }).toString();
    env = {
      DATABASE_URL: db(databases[0]!),
      BILLING_DATABASE_URL: db(databases[1]!),
      AMQP_URL: `${testEnv.amqpUrl.replace(/\/+$/, '')}/${vhost}`,
      PORT: '0',
      OPS_TOKEN: uniqueName('operator_token'),
    };
  }, 180_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await run('rabbitmqctl', ['delete_vhost', vhost], { timeout: 60_000 }).catch(() => undefined);
    for (const db of databases) await query(testEnv.postgresUrl, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    rmSync(dir, { recursive: true, force: true });
  });

  function start(name: string): Running {
    const file = files.get(name);
    if (!file) throw new Error(`no program ${name}; found: ${[...files.keys()].join(', ')}`);
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: dir,
      env: { ...process.env, ...env, TSX_TSCONFIG_PATH: join(dir, 'tsconfig.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const end = exited(child).finally(() => children.delete(child));
    return {
      child,
      out: () => out,
      err: () => err,
      ended: end,
      async stop(ms = 30_000) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), ms);
        const result = await end.finally(() => clearTimeout(timer));
        if (result.signal === 'SIGKILL') throw new Error(`${name} did not exit within ${ms} ms of SIGTERM`);
        return result;
      },
    };
  }

  it('finds the README programs', () => {
    expect(programs.map((p) => p.name)).toEqual(expect.arrayContaining(scenarios.flatMap((s) => s.programs)));
  });

  // tsc checks the sources the programs import too: slow on a loaded machine.
  it('type-checks every program', { timeout: 300_000 }, async () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir }).catch(
      (err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }),
    );
    expect(result.stdout).toBe('');
  });

  for (const scenario of scenarios) it(scenario.title, () => scenario.run(start, env));

  const inScenario = new Set(scenarios.flatMap((s) => s.programs));
  for (const program of programs.filter((p: DocProgram) => !inScenario.has(p.name))) {
    it(`${program.name} (line ${program.line}) runs to completion`, async () => {
      const running = start(program.name);
      const timer = setTimeout(() => running.child.kill('SIGKILL'), 60_000);
      const result = await running.ended.finally(() => clearTimeout(timer));
      expect(result, result.stderr).toMatchObject({ code: 0 });
    });
  }
});
