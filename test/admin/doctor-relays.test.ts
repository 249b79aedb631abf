/**
 * The doctor on relays that are gone, with real relays on PostgreSQL: one that stopped cleanly is
 * told from one that never ran, and pending rows with no relay for minutes are a producer failure
 * that the verdict names, however young the rows and whatever fails downstream.
 */
import { rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDoctor, type DoctorReport } from '../../src/admin/doctor/index.js';
import { OutboxRelay } from '../../src/producer/outbox-relay.js';
import { Outbox } from '../../src/producer/outbox.js';
import { createEmbeddedTransport, type EmbeddedTransport } from '../../src/transports/embedded/index.js';
import { makePostgresFixture } from '../stores/fixtures.js';
import { seedDeadLetters } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';
import { newRow } from '../support/rows.js';
import { waitFor } from '../support/wait.js';

const MIN = 60_000;

describe('doctor and relays that are gone (PostgreSQL)', () => {
  let f: Awaited<ReturnType<typeof makePostgresFixture>>;
  let transport: EmbeddedTransport;
  const logPath = join(tmpdir(), `${uniqueName('doctor_log')}.sqlite`);

  beforeEach(async () => {
    f = await makePostgresFixture('doctor_relays');
    transport = await createEmbeddedTransport({ path: logPath, logger: null });
  });
  afterEach(async () => {
    await transport.close();
    await f.teardown();
    rmSync(logPath, { force: true });
  });

  const check = (report: DoctorReport, id: string) => report.checks.find((c) => c.id === id)!;

  /** A relay that publishes one row, then stops gracefully; resolves with its id and when it stopped. */
  async function relayThatStopped(): Promise<{ relayId: string; stoppedAt: number }> {
    const relay = new OutboxRelay({ store: f.store, publisher: transport, logger: null, pollIntervalMs: 50 });
    await relay.start();
    const outbox = new Outbox({ store: f.store });
    await f.store.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: { n: 0 } }));
    await waitFor('the relay to publish', async () => (await f.store.outbox.stats()).sent === 1);
    await relay.stop();
    return { relayId: relay.id, stoppedAt: Date.now() };
  }

  it('a relay that stopped cleanly is not "no relay has ever reported"', async () => {
    const { relayId } = await relayThatStopped();
    const outbox = new Outbox({ store: f.store });
    await f.store.transaction((tx) => outbox.add(tx, { type: 'order.created', payload: { n: 1 } }));
    expect(await f.store.heartbeats.relays()).toEqual([]); // no relay runs

    const report = await runDoctor({ store: f.store, now: Date.now() + 5 * MIN });
    const stopped = `no relay is running: the last one, ${relayId} on ${hostname()}, stopped cleanly 5 min ago`;
    expect(report.verdict).toMatchObject({
      place: 'producer',
      level: 'fail',
      message: `producer: oldest pending message is 5 min old and ${stopped}`,
    });
    expect(check(report, 'producer.relays')).toMatchObject({
      level: 'warn',
      message: `${stopped} — new messages will not leave the outbox`,
    });
    expect(JSON.stringify(report)).not.toContain('ever reported');
  });

  it('pending rows with no relay for minutes: a producer failure the verdict names, though the rows are young', async () => {
    await relayThatStopped();
    const judgedAt = Date.now() + 10 * MIN;
    // Rows written 5 s before the doctor looks; meanwhile a consumer group fails every message.
    await f.store.transaction(async (tx) => {
      for (let i = 0; i < 3; i++)
        await f.store.outbox.insert(tx, newRow({ createdAt: judgedAt - 5_000 }), { ordered: false });
    });
    await seedDeadLetters(f.store as never, 6, { group: uniqueName('g'), status: 'pending', at: judgedAt - MIN });

    const report = await runDoctor({ store: f.store, now: judgedAt });
    expect(check(report, 'consumer.failing').level).toBe('fail');
    expect(check(report, 'producer.pending')).toMatchObject({ level: 'fail', place: 'producer' });
    expect(check(report, 'producer.pending').message).toMatch(
      /^oldest pending message is 5 s old and no relay is running: the last one, .* stopped cleanly 10 min ago$/,
    );
    expect(report.verdict).toMatchObject({ place: 'producer', level: 'fail' });
  });

  it('young rows while a relay has only just stopped are not a failure yet', async () => {
    const { stoppedAt } = await relayThatStopped();
    await f.store.transaction((tx) => f.store.outbox.insert(tx, newRow({ createdAt: stoppedAt }), { ordered: false }));
    const report = await runDoctor({ store: f.store, now: stoppedAt + 10_000 });
    expect(check(report, 'producer.pending').level).toBe('ok');
  });
});
