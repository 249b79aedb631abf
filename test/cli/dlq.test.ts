import { userInfo } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';
import {
  addDeadLetter,
  cliFixtures,
  cliRunner,
  runCli,
  seed,
  snapshot,
  type CliFixture,
  type Seeded,
} from './cli-harness.js';

describe.each(['sqlite', 'postgres'] as const)('surety dlq (%s)', (db) => {
  let f: CliFixture;
  let s: Seeded;
  const { run: dlq, json } = cliRunner(() => f.dbArgs, 'dlq');

  beforeEach(async () => {
    f = await cliFixtures[db]();
    s = await seed(f.store);
  });
  afterEach(() => f.teardown());

  it('lists with filters and pages, as a table and as JSON', async () => {
    const table = await dlq('list');
    expect(table.code, table.err).toBe(0);
    const lines = table.out.trim().split('\n');
    expect(lines[0]).toMatch(/^\s*ID\s+STATUS\s+GROUP\s+TYPE\s+KEY\s+ATTEMPTS\s+NEXT RETRY\s+UPDATED\s+ERROR$/);
    expect(lines).toHaveLength(5);
    expect(lines[1]).toContain('shipping'); // newest first

    const billing = await json('list', '--group', 'billing', '--status', 'pending');
    expect(billing.items.map((r: { id: number }) => r.id)).toEqual([s.dlq.billingB, s.dlq.billingA]);
    expect((await json('list', '--error', 'ANSWERED 503')).items).toHaveLength(2);
    expect((await json('list', '--type', 'invoice.issued')).items[0]).toMatchObject({ status: 'dead', key: 'inv-1' });
    expect((await json('list', '--since', '1h')).items).toHaveLength(4);

    const first = await json('list', '--limit', '3');
    expect(first.items).toHaveLength(3);
    const second = await json('list', '--limit', '3', '--before', String(first.nextBefore));
    expect(second).toEqual({ items: [expect.objectContaining({ id: s.dlq.billingA })], nextBefore: null });
    expect((await dlq('list', '--limit', '3')).out).toContain(`more: add --before ${first.nextBefore}`);
    expect((await dlq('list', '--until', '2001-01-01')).out).toBe('no dead letter matches\n');
  });

  it('shows one dead letter with its body and history', async () => {
    const res = await dlq('show', String(s.dlq.billingA));
    expect(res.code, res.err).toBe(0);
    expect(res.out).toMatch(/^status:\s+pending$/m);
    expect(res.out).toMatch(/^group:\s+billing$/m);
    expect(res.out).toMatch(/^last error:\s+Error: downstream answered 503$/m);
    expect(res.out).toContain('"key":"order-1"');
    expect(res.out).toMatch(/history:\n\s*AT\s+EVENT[\s\S]*failed/);
    const row = await json('show', String(s.dlq.billingA));
    expect(row).toMatchObject({
      id: s.dlq.billingA,
      group: 'billing',
      history: [expect.objectContaining({ kind: 'failed' })],
    });
  });

  it('replays and ignores by id, audited as cli:<os user>', async () => {
    const replay = await dlq('replay', String(s.dlq.billingDead), '--reason', 'validation fixed');
    expect(replay, replay.err).toMatchObject({
      code: 0,
      out: `dead letter ${s.dlq.billingDead}: due for replay now\n`,
    });
    const replayed = (await f.store.admin.getDeadLetterById(s.dlq.billingDead))!;
    expect(replayed.status).toBe('pending');
    expect(replayed.nextRetryAt!).toBeLessThanOrEqual(Date.now());

    const ignore = await dlq('ignore', String(s.dlq.shipping), '--reason', 'customer cancelled');
    expect(ignore.code, ignore.err).toBe(0);
    expect(await f.store.admin.getDeadLetterById(s.dlq.shipping)).toMatchObject({
      status: 'ignored',
      ignoredReason: 'customer cancelled',
    });

    // The row's state no longer allows it: exit 1 with the reason; a missing row likewise.
    const again = await dlq('ignore', String(s.dlq.shipping), '--reason', 'twice');
    expect(again.code).toBe(1);
    expect(again.err).toContain(`dead letter ${s.dlq.shipping} is ignored; only pending or dead rows can be ignored`);
    const missing = await dlq('replay', '999999');
    expect(missing).toMatchObject({ code: 1, err: expect.stringContaining('dead letter 999999 not found') });

    const audit = (await f.store.admin.listAudit({}, { limit: 10 })).items;
    const actor = `cli:${userInfo().username}`;
    expect(audit.map((a) => [a.actor, a.role, a.action, a.target, a.outcome, a.reason])).toEqual([
      [actor, 'operator', 'dlq.replay', 'dlq:999999', 'noop', null],
      [actor, 'operator', 'dlq.ignore', `dlq:${s.dlq.shipping}`, 'noop', 'twice'],
      [actor, 'operator', 'dlq.ignore', `dlq:${s.dlq.shipping}`, 'ok', 'customer cancelled'],
      [actor, 'operator', 'dlq.replay', `dlq:${s.dlq.billingDead}`, 'ok', 'validation fixed'],
    ]);
  });

  it('replays and ignores by filter as bulk jobs, with plain progress lines off a terminal', async () => {
    const res = await dlq('replay', '--all-matching', '--group', 'billing', '--status', 'pending', '--rate', '500');
    expect(res.code, res.err).toBe(0);
    expect(res.out).toMatch(/^job \d+ \(dlq\.replay\) done: 2\/2 rows examined, 2 changed$/m);
    expect(res.err).toMatch(/^job \d+ dlq\.replay: 2\/2 rows, 2 changed$/m);
    for (const id of [s.dlq.billingA, s.dlq.billingB])
      expect((await f.store.admin.getDeadLetterById(id))!.nextRetryAt!).toBeLessThanOrEqual(Date.now());
    expect((await f.store.admin.getDeadLetterById(s.dlq.billingDead))!.status).toBe('dead'); // not matched

    const ignored = await json('ignore', '--all-matching', '--group', 'shipping', '--reason', 'obsolete');
    expect(ignored).toMatchObject({ kind: 'dlq.ignore', status: 'done', total: 1, changed: 1, reason: 'obsolete' });
    expect((await f.store.admin.getDeadLetterById(s.dlq.shipping))!.status).toBe('ignored');
    const created = (await f.store.admin.listAudit({ action: 'job.create' }, { limit: 10 })).items;
    expect(created).toHaveLength(2);
  });

  it('replays every pending or dead row with --all, never an ignored one, and says when nothing matched', async () => {
    const ignored = await dlq('ignore', String(s.dlq.shipping), '--reason', 'customer cancelled');
    expect(ignored.code, ignored.err).toBe(0);
    const all = await json('replay', '--all', '--rate', '1000');
    expect(all).toMatchObject({ kind: 'dlq.replay', status: 'done', total: 3, changed: 3 });
    expect(all.filter).toEqual({ status: ['pending', 'dead'] });
    expect(await f.store.admin.getDeadLetterById(s.dlq.shipping)).toMatchObject({
      status: 'ignored',
      ignoredReason: 'customer cancelled',
    });
    expect((await f.store.admin.getDeadLetterById(s.dlq.billingDead))!.status).toBe('pending');

    // Naming ignored is how ignored rows are replayed in bulk.
    const named = await json('replay', '--all-matching', '--status', 'ignored');
    expect(named).toMatchObject({ status: 'done', total: 1, changed: 1 });
    expect((await f.store.admin.getDeadLetterById(s.dlq.shipping))!.status).toBe('pending');

    // Nothing matched: the job is created done, and that is success.
    const none = await dlq('replay', '--all-matching', '--group', 'nobody');
    expect(none.code, none.err).toBe(0);
    expect(none.out).toMatch(/^job \d+ \(dlq\.replay\) done: nothing matched, no row changed$/m);
    const jobs = await f.store.admin.listJobs({ limit: 1 });
    expect(jobs.items[0]).toMatchObject({ status: 'done', total: 0, owner: null });
  });

  it("shows a killed replayer's rows as pending once its lease has ended, and replays and ignores them", async () => {
    const group = 'orphans';
    const due = (key: string) =>
      addDeadLetter(f.store, { group, type: 'order.created', key, error: 'timeout', now: Date.now() - 120_000 });
    const [one, two, bulk] = [await due('one'), await due('two'), await due('bulk')];
    const child = spawnTs('support/replayer-process.ts', {
      ...f.childEnv,
      SURETY_GROUP: group,
      SURETY_LEASE_MS: '1000',
    });
    const end = await exited(child);
    expect(end.signal, end.stderr).toBe('SIGKILL');
    // As stored: at time 0 no lease had ended yet.
    const held = (await f.store.admin.getDeadLetterById(one, 0))!;
    expect(held.status).toBe('replaying');
    await waitFor("the dead replayer's lease to end", () => Date.now() >= held.leaseUntil!);

    const listed = (status: string) =>
      json('list', '--group', group, '--status', status).then((p) => p.items.map((r: { id: number }) => r.id));
    expect(await listed('pending')).toEqual([bulk, two, one]);
    expect(await listed('replaying')).toEqual([]);
    const shown = await dlq('show', String(one));
    expect(shown.out).toMatch(/^status:\s+pending$/m);
    expect(shown.out).toMatch(new RegExp(`^claim:\\s+${held.claimedBy}, lease ended \\S+$`, 'm'));
    const doctor = await runCli(['doctor', ...f.dbArgs]);
    expect(doctor.out).toContain(`no replayer is running for ${group}: 3 dead letters a replayer left when it died`);

    expect(await dlq('replay', String(one), '--reason', 'replayer died')).toMatchObject({ code: 0 });
    expect(await dlq('ignore', String(two), '--reason', 'obsolete')).toMatchObject({ code: 0 });
    const job = await json('replay', '--all-matching', '--group', group, '--status', 'pending', '--rate', '1000');
    expect(job).toMatchObject({ total: 2, changed: 2 }); // one, made due again, and bulk
    expect((await f.store.admin.getDeadLetterById(two))!.status).toBe('ignored');
    for (const id of [one, bulk])
      expect(await f.store.admin.getDeadLetterById(id)).toMatchObject({ status: 'pending', claimedBy: null });

    // A live replayer's row is still refused.
    const live = await addDeadLetter(f.store, { group: 'alive', type: 'order.created', key: 'l', error: 'x', now: 0 });
    await f.store.deadLetters.claimDue({ owner: 'alive', group: 'alive', now: Date.now(), limit: 1, leaseMs: 600_000 });
    const refused = await dlq('replay', String(live));
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(
      `dead letter ${live} is replaying; only pending, dead or ignored rows can be replayed`,
    );
  });

  it('refuses malformed input with a specific message and exit code 2, changing nothing', async () => {
    const before = await snapshot(f.store);
    const id = String(s.dlq.billingA);
    const cases: [string[], string][] = [
      [
        ['list', '--status', 'bogus'],
        '--status: "bogus" is not a status; allowed: pending, replaying, resolved, ignored, dead',
      ],
      [['list', '--limit', '501'], '--limit must be an integer from 1 to 500 (got "501")'],
      [['list', '--limit', 'ten'], '--limit must be an integer from 1 to 500 (got "ten")'],
      [['list', '--before', '-3'], '--before must be an integer'],
      [['list', '--since', 'yesterday'], '--since must be an ISO 8601 time'],
      [['list', '--since', '2025-02-01', '--until', '2025-01-01'], '--until: must be after "from"'],
      [['list', '--error', 'x'.repeat(201)], '--error: must be at most 200 characters'],
      [['list', '--bogus'], "unknown option '--bogus'"],
      [['show', 'abc'], '<id> must be a dead-letter id, a positive integer (got "abc")'],
      [['show'], "missing required argument 'id'"],
      [['show', '1', '2'], 'too many arguments'],
      [['replay'], 'give the ids of the dead letters to replay, or --all-matching'],
      [['replay', id, '--all-matching'], 'give either ids or --all-matching, not both'],
      [['replay', id, '--all'], 'give either ids or --all, not both'],
      // A bulk job over no filter must be asked for by name, never reached by forgetting the filter.
      [['replay', '--all-matching'], '--all-matching needs at least one filter flag; to act on every row, use --all'],
      [['ignore', '--all-matching', '--reason', 'x'], '--all-matching needs at least one filter flag'],
      [['replay', '--all', '--group', 'billing'], '--all acts on every row: drop the filter flags'],
      [['replay', '--group', 'billing'], 'filter flags select rows only with --all-matching'],
      [['replay', id, '--rate', '5'], '--rate applies only with --all-matching or --all'],
      [
        ['replay', '--all-matching', '--status', 'dead', '--rate', '0'],
        '--rate must be an integer from 1 to 10000 (got "0")',
      ],
      [['replay', '--all-matching', '--status', 'resolvd'], '--status: "resolvd" is not a status'],
      [['ignore', id], '--reason is required: say why these are ignored'],
      [['ignore', id, '--reason', '   '], '--reason is required'],
      [['ignore', '--all-matching', '--group', 'billing'], '--reason is required'],
      [['ignore', id, '--reason', 'r'.repeat(501)], '--reason: must be at most 500 characters'],
      [['frob'], 'unknown command "frob" (allowed: list, show, replay, ignore)'],
    ];
    for (const [args, message] of cases) {
      const res = await dlq(...args);
      expect({ args, code: res.code }).toEqual({ args, code: 2 });
      expect(res.err, args.join(' ')).toContain(message);
    }
    expect(await snapshot(f.store)).toBe(before);
  });
});
