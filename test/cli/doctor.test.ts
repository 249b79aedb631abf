import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/producer/outbox.js';
import { testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { cliFixtures, cliRunner, heartbeat, runCli, snapshot, type CliFixture } from './cli-harness.js';

const MIN = 60_000;

describe.each(['sqlite', 'postgres'] as const)('surety doctor (%s)', (db) => {
  let f: CliFixture;
  const { run: doctor } = cliRunner(() => f.dbArgs, 'doctor');

  beforeEach(async () => {
    f = await cliFixtures[db]();
  });
  afterEach(() => f.teardown());

  it('exits 0 when producer and consumer are healthy', async () => {
    await heartbeat(f.store, Date.now());
    const res = await doctor();
    expect(res.code, res.out + res.err).toBe(0);
    expect(res.out).toMatch(/^producer\n {2}ok {4}no message is waiting/m);
    expect(res.out).toContain('broker\n  (not checked: no broker configured)');
    expect(res.out).toContain('verdict: producer, broker and consumer look healthy\n');
  });

  it('exits 4 with the verdict and next step when the relay is down, 3 for warnings only', async () => {
    const outbox = new Outbox({ store: f.store, clock: { now: () => Date.now() - 20 * MIN } });
    await f.store.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: {} }));
    await heartbeat(f.store, Date.now() - 20 * MIN);
    const res = await doctor();
    expect(res.code, res.err).toBe(4);
    expect(res.out).toContain(
      'verdict: producer: oldest pending message is 20 min old and no relay has claimed for 20 min — the relay is down\n' +
        'next step: restart the relay (last seen: relay-a on app-1, pid 4242, 20 min ago)',
    );
    const report = JSON.parse((await doctor('--json')).out);
    expect(report.verdict).toMatchObject({ place: 'producer', level: 'fail' });
    expect(report.checks.map((c: { id: string }) => c.id)).toContain('consumer.inbox');

    // The relay is back and has sent the old row; a newer one went dead: only a warning remains.
    await heartbeat(f.store, Date.now());
    const claim = () =>
      f.store.outbox.claim({ owner: 'x', limit: 10, now: Date.now(), leaseMs: 1_000, ordered: false });
    await f.store.outbox.markSent(
      (await claim()).map((r) => r.seq),
      Date.now(),
    );
    await f.store.transaction((tx) => new Outbox({ store: f.store }).add(tx, { type: 'order.created', payload: {} }));
    const [row] = await claim();
    await f.store.outbox.recordFailure({
      seq: row!.seq,
      owner: 'x',
      attempts: 12,
      nextAttemptAt: 0,
      dead: true,
      error: 'nope',
    });
    const warn = await doctor();
    expect(warn.code, warn.out).toBe(3);
    expect(warn.out).toContain(
      'verdict: producer: 1 outbox row is dead — the relay gave up and they never reached the broker',
    );
  });

  it('checks the broker queues of the config file, and --queue ones', async () => {
    const conn = await amqp.connect(testEnv.amqpUrl);
    const ch = await conn.createChannel();
    const queue = uniqueName('cli_doctor');
    const extra = uniqueName('cli_extra');
    const dir = mkdtempSync(join(tmpdir(), 'surety-doctor-'));
    try {
      await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      for (let i = 0; i < 7; i++) ch.sendToQueue(queue, Buffer.from('{}'), { persistent: true });
      await heartbeat(f.store, Date.now());
      const config = join(dir, 'surety.yaml');
      writeFileSync(config, `transport:\n  kind: rabbitmq\n  url: ${testEnv.amqpUrl}\n  queues: [${queue}]\n`);
      await waitFor('7 ready', async () => (await ch.checkQueue(queue)).messageCount === 7);
      const res = await doctor('--config', config);
      expect(res.code, res.out + res.err).toBe(4);
      expect(res.out).toContain(`verdict: broker: ${queue} has 7 ready and 0 consumers — the consumer is down`);
      const withExtra = JSON.parse((await doctor('--config', config, '--queue', extra, '--json')).out);
      expect(withExtra.checks.find((c: { facts: { queue?: string } }) => c.facts.queue === extra)).toMatchObject({
        level: 'fail',
        facts: { exists: false },
      });
      // Several cluster nodes from the environment: the one that refuses is skipped.
      const nodes = await runCli(['doctor', ...f.dbArgs, '--queue', queue], {
        SURETY_AMQP_URL: `amqp://guest:guest@127.0.0.1:1,${testEnv.amqpUrl}`,
      });
      expect(nodes.code, nodes.out + nodes.err).toBe(4);
      expect(nodes.out).toContain(`verdict: broker: ${queue} has 7 ready and 0 consumers — the consumer is down`);
    } finally {
      await ch.deleteQueue(queue).catch(() => undefined);
      await conn.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses bad usage with exit 2; a database it cannot reach is a failure found (exit 4)', async () => {
    const before = await snapshot(f.store);
    expect(await doctor('--queue', ' ')).toMatchObject({ code: 2, err: 'surety: --queue must not be empty\n' });
    expect(await doctor('--verbose')).toMatchObject({ code: 2, err: "surety: unknown option '--verbose'\n" });
    expect(await snapshot(f.store)).toBe(before);
    const down = await runCli(['doctor', '--database', 'postgres://postgres@127.0.0.1:1/none']);
    expect(down.code).toBe(4);
    expect(down.out).toMatch(/^verdict: producer: the database is unreachable: .*ECONNREFUSED/m);
  });
});
