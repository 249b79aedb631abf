import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/producer/outbox.js';
import { makeSqliteFixture } from '../stores/sqlite-fixture.js';
import { wire } from '../support/consumer-env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';
import { runCli, type CliStore } from './cli-harness.js';

const TOKEN = 'start-test-operator-token';
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('surety start (SQLite + embedded log)', () => {
  let f: Awaited<ReturnType<typeof makeSqliteFixture>>;
  let store: CliStore;
  let dir: string;
  let child: ChildProcess | undefined;

  beforeEach(async () => {
    f = await makeSqliteFixture('start');
    store = f.store as unknown as CliStore;
    dir = mkdtempSync(join(tmpdir(), 'surety-start-'));
  });
  afterEach(async () => {
    child?.kill('SIGKILL');
    child = undefined;
    await f.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  function writeConfig(text: string): string {
    const path = join(dir, 'surety.yaml');
    writeFileSync(path, text);
    return path;
  }

  it('runs relay, replayer and console from the config, and stops gracefully on SIGTERM', async () => {
    await store.transaction((tx) => tx.query('CREATE TABLE surety_effects (note TEXT NOT NULL)'));
    const outbox = new Outbox({ store });
    const { messageId } = await store.transaction((tx) =>
      outbox.add(tx, { type: 'order.created', key: 'o-1', payload: { key: 'o-1' } }),
    );
    const m = wire({ type: 'order.created', key: 'o-2', payload: { key: 'o-2' } });
    const failed = await store.transaction((tx) =>
      store.deadLetters.recordDeliveryFailure(
        tx,
        {
          messageId: m.id,
          group: 'billing',
          topic: 'order.created',
          type: 'order.created',
          key: 'o-2',
          version: 1,
          headers: m.headers,
          body: m.body.toString('utf8'),
          bodyEncoding: 'utf8',
          error: 'Error: downstream answered 503',
          poison: false,
          now: Date.now(),
        },
        () => ({ status: 'pending', nextRetryAt: Date.now() - 1_000 }),
      ),
    );
    const config = writeConfig(`database:
  url: sqlite:${f.path}
transport:
  kind: embedded
  path: log.sqlite
relay:
  pollIntervalMs: 50
  heartbeatMs: 200ms
replayer:
  enabled: true
  module: ${fixture('replay-consumer.ts')}
  intervalMs: 100
console:
  enabled: true
  port: 0
  tokens:
    - { name: ops, role: operator, token: ${TOKEN} }
`);
    child = spawnTs(
      'cli/fixtures/surety.ts',
      { SURETY_TEST_DB: f.path, SURETY_TEST_EFFECTS: 'surety_effects', SURETY_LOG_LEVEL: 'warn' },
      ['start', '--config', config],
    );
    const end = exited(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor('the start banner', () => /console at http:\/\/\S+\n/.test(out), 30_000);
    expect(out).toMatch(/^ {2}relay \S+ -> embedded$/m);
    expect(out).toMatch(/^ {2}replayer for group billing \(100\/s\)$/m);
    const url = /console at (http:\/\/\S+)\n/.exec(out)![1]!;

    await waitFor(
      'the relay to send the outbox row',
      async () => (await store.outbox.get(messageId))?.status === 'sent',
    );
    await waitFor('the replayer to resolve the dead letter', async () => {
      return (await store.admin.getDeadLetterById(failed.id))?.status === 'resolved';
    });
    const effects = await store.transaction((tx) => tx.query<{ note: string }>('SELECT note FROM surety_effects'));
    expect(effects.rows).toEqual([{ note: 'o-2' }]);
    await waitFor('a heartbeat with a claim', async () => (await store.heartbeats.relays())[0]?.lastClaimedAt != null);

    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/api/doctor`)).status).toBe(401);
    const doctor = await fetch(`${url}/api/doctor`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(doctor.status).toBe(200);
    const report = (await doctor.json()) as { verdict: { level: string }; checks: { id: string; level: string }[] };
    expect(report.checks.find((c) => c.id === 'producer.relays')).toMatchObject({ level: 'ok' });
    // One /metrics for everything it runs: the stores' gauges, the relay's and the replayer's consumer's.
    const metrics = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await metrics.text();
    expect(text).toMatch(/^surety_outbox_rows\{status="sent",store="default"\} 1$/m);
    expect(text).toMatch(/^surety_relay_publish_attempts_total\{outcome="confirmed"\} 1$/m);
    expect(text).toMatch(/^surety_replay_total\{group="billing",outcome="resolved"\} 1$/m);
    expect(text.match(/^# TYPE surety_outbox_rows gauge$/gm)).toHaveLength(1);

    child.kill('SIGTERM');
    const { code, signal, stderr } = await end;
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null });
    expect(out).toContain('surety stopping (SIGTERM)...\nsurety stopped\n');
    expect(await store.heartbeats.relays()).toEqual([]); // a graceful stop removes its heartbeat
    child = undefined;
  });

  it('refuses a config that cannot start, with exit code 2', async () => {
    const db = ['--database', `sqlite:${f.path}`];
    expect(await runCli(['start', ...db], { SURETY_RELAY_ENABLED: 'false' })).toMatchObject({
      code: 2,
      err: 'surety: nothing to start: enable relay, replayer or console in the config\n',
    });
    expect(await runCli(['start', ...db])).toMatchObject({
      code: 2,
      err: 'surety: config error at transport: is required when relay.enabled is true (rabbitmq or embedded)\n',
    });
    const notConsumer = await runCli(['start', ...db], {
      SURETY_RELAY_ENABLED: 'false',
      SURETY_REPLAYER_ENABLED: 'true',
      SURETY_REPLAYER_MODULE: fixture('not-a-consumer.ts'),
    });
    expect(notConsumer.code).toBe(2);
    expect(notConsumer.err).toContain('config error at replayer.module: ');
    expect(notConsumer.err).toContain('must export your Consumer');
    const missing = await runCli(['start', ...db], {
      SURETY_RELAY_ENABLED: 'false',
      SURETY_REPLAYER_ENABLED: 'true',
      SURETY_REPLAYER_MODULE: join(dir, 'nope.js'),
    });
    expect(missing).toMatchObject({
      code: 2,
      err: expect.stringContaining('config error at replayer.module: cannot import'),
    });
    expect(await runCli(['start', ...db, '--migrat'])).toMatchObject({
      code: 2,
      err: expect.stringContaining("unknown option '--migrat'"),
    });
  });
});
