/**
 * A replayer SIGKILLed with rows claimed, and no replayer left: once its lease has ended, the API
 * and the doctor see those rows as pending, and every operator action works on them; a row under a
 * live lease is still refused. The admin server's clock is moved by hand across the lease's end.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDoctor, type DoctorReport } from '../../src/admin/index.js';
import { failureRecord } from '../../src/consumer/batch-processor.js';
import type { DeadLetterRow } from '../../src/ports/consumer-store.js';
import { startAdminFixture, type AdminFixture } from '../support/admin-fixture.js';
import { wire } from '../support/consumer-env.js';
import { uniqueName } from '../support/env.js';
import { exited, spawnTs } from '../support/spawn.js';
import { storeFixtures } from '../support/stores.js';
import { ManualClock, waitFor } from '../support/wait.js';

const MIN = 60_000;

for (const dialect of Object.keys(storeFixtures) as (keyof typeof storeFixtures)[]) {
  describe(`a dead replayer's rows over the API on ${dialect}`, () => {
    let fx: AdminFixture;
    let clock: ManualClock;

    beforeEach(async () => {
      clock = new ManualClock(Date.now());
      fx = await startAdminFixture(dialect, {
        clock,
        doctor: () => runDoctor({ store: fx.store, now: clock.now() }),
        cache: { overviewMs: 0, doctorMs: 0 },
      });
    });
    afterEach(async () => fx?.close());

    const op = (method: string, path: string, body?: unknown) =>
      fx.api.call(method, path, { token: fx.tokens.operator, body });
    const ids = async (query: string) =>
      (await op('GET', `/api/dead-letters?${query}`)).body.items.map((r: { id: number }) => r.id);
    const doctor = async (): Promise<DoctorReport> => (await op('GET', '/api/doctor')).body;
    const check = (report: DoctorReport, id: string) => report.checks.find((c) => c.id === id)!;

    /** Dead letters a replayer can run, due long ago, one per key. */
    async function replayable(group: string, keys: readonly string[]): Promise<DeadLetterRow[]> {
      const rows: DeadLetterRow[] = [];
      for (const key of keys) {
        const message = wire({ type: 'order.created', key, payload: { key } });
        const record = failureRecord({ message, topic: 'orders', replay: false }, group, 'timeout', false, 1_000);
        await fx.store.transaction((tx) =>
          fx.store.deadLetters.recordDeliveryFailure(tx, record, () => ({ status: 'pending', nextRetryAt: 1_000 })),
        );
        rows.push((await fx.store.deadLetters.getDeadLetter(record.messageId, group))!);
      }
      return rows;
    }

    /** Runs a bulk job over the API to its end; returns it. */
    async function bulk(body: Record<string, unknown>) {
      const created = await op('POST', '/api/jobs', { ratePerSecond: 1_000, ...body });
      expect(created.status, created.text).toBe(202);
      const id = created.body.job.id as number;
      await waitFor('the job to finish', async () => (await op('GET', `/api/jobs/${id}`)).body.status === 'done');
      return (await op('GET', `/api/jobs/${id}`)).body;
    }

    it('lists, counts and acts on them as pending once the lease ends; the doctor says no replayer runs', async () => {
      const group = uniqueName('g');
      const rows = await replayable(group, ['replay', 'ignore', 'bulk', 'bulk', 'bulk-ignore']);
      const child = spawnTs('support/replayer-process.ts', {
        ...fx.f.childEnv,
        SURETY_GROUP: group,
        SURETY_LEASE_MS: String(5 * MIN),
      });
      const end = await exited(child);
      expect(end.signal, end.stderr).toBe('SIGKILL');
      const held = (await fx.store.deadLetters.getDeadLetter(rows[0]!.messageId, group))!;
      expect(held.status).toBe('replaying');
      const all = rows.map((r) => r.id).reverse();

      // Under the lease: replaying, and refused.
      clock.advance(held.leaseUntil! - 1 - clock.now());
      expect(await ids(`group=${group}&status=replaying`)).toEqual(all);
      const busy = await op('POST', `/api/dead-letters/${rows[0]!.id}/replay`, {});
      expect(busy.status).toBe(409);
      expect(busy.body.error).toMatchObject({ code: 'SURETY_CONFLICT' });
      expect(check(await doctor(), 'consumer.replay-leases').level).toBe('ok');

      // Its lease ends; nothing takes the rows over.
      clock.advance(1);
      expect(await ids(`group=${group}&status=pending`)).toEqual(all);
      expect(await ids(`group=${group}&status=replaying`)).toEqual([]);
      const one = (await op('GET', `/api/dead-letters/${rows[0]!.id}`)).body;
      expect(one).toMatchObject({ status: 'pending', claimedBy: held.claimedBy, leaseUntil: held.leaseUntil });
      const overview = (await op('GET', '/api/overview')).body;
      expect(overview.deadLetters).toMatchObject({ pending: 5, replaying: 0 });
      expect(overview.expiredLeases).toBe(5);
      expect(overview.dueRetries).toEqual([
        { group, count: 5, expiredLeases: 5, oldestDueAt: held.leaseUntil, store: 'default' },
      ]);
      const lineage = (await op('GET', `/api/messages/${rows[0]!.messageId}/lineage`)).body;
      expect(lineage.deadLetters.map((d: DeadLetterRow) => d.status)).toEqual(['pending']);

      const report = await doctor();
      expect(report.verdict).toMatchObject({
        place: 'consumer',
        level: 'warn',
        message: `consumer: no replayer is running for ${group}: 5 dead letters a replayer left when it died are pending again and none has taken them over (5 retries due, the oldest for 0 s)`,
      });
      expect(report.verdict.nextStep).toContain(
        `start a replayer for ${group} (\`surety start\` with replayer.enabled`,
      );

      // Every action works on them: one by one and in bulk.
      const replay = await op('POST', `/api/dead-letters/${rows[0]!.id}/replay`, { reason: 'replayer died' });
      expect(replay.status, replay.text).toBe(200);
      const ignore = await op('POST', `/api/dead-letters/${rows[1]!.id}/ignore`, { reason: 'obsolete' });
      expect(ignore.status, ignore.text).toBe(200);
      expect(await bulk({ kind: 'dlq.replay', filter: { group, key: 'bulk' } })).toMatchObject({
        total: 2,
        changed: 2,
      });
      expect(
        await bulk({ kind: 'dlq.ignore', filter: { group, key: 'bulk-ignore', status: 'pending' }, reason: 'x' }),
      ).toMatchObject({ total: 1, changed: 1 });
      const after = await Promise.all(rows.map((r) => fx.store.deadLetters.getDeadLetter(r.messageId, group)));
      expect(after.map((r) => [r!.status, r!.claimedBy])).toEqual([
        ['pending', null],
        ['ignored', null],
        ['pending', null],
        ['pending', null],
        ['ignored', null],
      ]);

      // A row under a live lease is still refused.
      const liveGroup = uniqueName('g');
      const [live] = await replayable(liveGroup, ['live']);
      await fx.store.deadLetters.claimDue({
        owner: 'alive',
        group: liveGroup,
        now: clock.now(),
        limit: 1,
        leaseMs: 5 * MIN,
      });
      for (const action of ['replay', 'ignore']) {
        const refused = await op('POST', `/api/dead-letters/${live!.id}/${action}`, { reason: 'no' });
        expect(refused.status, action).toBe(409);
        expect(refused.body.error.code).toBe('SURETY_CONFLICT');
        expect(refused.body.error.message).toContain(`dead letter ${live!.id} is replaying`);
      }

      // Nothing replays what the operator made due: overdue, then failing once overdue for long.
      clock.advance(MIN);
      const overdue = check(await doctor(), 'consumer.replay-overdue');
      expect(overdue).toMatchObject({
        level: 'warn',
        message: `3 dead letters of ${group} are overdue for a retry, the oldest by 1 min — no replayer is running for ${group} (or it is far behind)`,
      });
      clock.advance(15 * MIN);
      expect((await doctor()).verdict).toMatchObject({ place: 'consumer', level: 'fail' });
    });
  });
}
