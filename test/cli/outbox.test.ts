import { userInfo } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliFixtures, cliRunner, seed, snapshot, type CliFixture, type Seeded } from './cli-harness.js';

describe.each(['sqlite', 'postgres'] as const)('surety outbox and audit (%s)', (db) => {
  let f: CliFixture;
  let s: Seeded;
  const { run, json } = cliRunner(() => f.dbArgs);

  beforeEach(async () => {
    f = await cliFixtures[db]();
    s = await seed(f.store);
  });
  afterEach(() => f.teardown());

  it('lists outbox rows with filters, as a table and as JSON', async () => {
    const table = await run('outbox', 'list');
    expect(table.code, table.err).toBe(0);
    expect(table.out).toMatch(/^\s*SEQ\s+MESSAGE ID\s+STATUS\s+TYPE\s+KEY\s+ATTEMPTS\s+CREATED\s+SENT\s+ERROR\n/);
    expect(table.out.trim().split('\n')).toHaveLength(4);
    const pending = await json('outbox', 'list', '--status', 'pending');
    expect(pending.items.map((r: { messageId: string }) => r.messageId)).toEqual([
      s.outbox.pendingB,
      s.outbox.pendingA,
    ]);
    expect((await json('outbox', 'list', '--type', 'invoice.issued')).items[0]).toMatchObject({ status: 'sent' });
    expect((await json('outbox', 'list', '--key', 'order-2')).items).toHaveLength(1);
    expect((await json('outbox', 'list', '--topic', 'order.created', '--limit', '1')).nextBefore).not.toBeNull();
  });

  it("shows a message's lineage", async () => {
    const res = await run('outbox', 'show', s.outbox.sent);
    expect(res.code, res.err).toBe(0);
    expect(res.out).toContain(`message ${s.outbox.sent}`);
    expect(res.out).toMatch(/^status:\s+sent$/m);
    expect(res.out).toMatch(/^sent \(confirmed\):\s+\d{4}-\d\d-\d\dT/m);
    expect(res.out).toContain('consumed by:\n  no inbox holds it');
    const lineage = await json('outbox', 'show', s.outbox.sent);
    expect(lineage).toMatchObject({ messageId: s.outbox.sent, outbox: { status: 'sent', key: 'inv-1' }, inbox: [] });
  });

  it('resends by id and by filter, audited as cli:<os user>', async () => {
    const res = await run('outbox', 'resend', s.outbox.sent, '--reason', 'billing lost it');
    expect(res.code, res.err).toBe(0);
    expect(res.out).toContain(`outbox ${s.outbox.sent}: pending again`);
    expect(await f.store.outbox.get(s.outbox.sent)).toMatchObject({
      status: 'pending',
      attempts: 0,
      messageId: s.outbox.sent,
    });

    const unknown = '0190b7a4-1c5e-7cc2-8d3e-0a1b2c3d4e5f';
    const missing = await run('outbox', 'resend', unknown);
    expect(missing).toMatchObject({ code: 1, err: expect.stringContaining(`no outbox row has message id ${unknown}`) });

    const bulk = await json('outbox', 'resend', '--all-matching', '--key', 'order-1');
    expect(bulk).toMatchObject({ kind: 'outbox.resend', status: 'done', total: 1, changed: 1 });

    const audit = await json('audit', '--action', 'outbox.resend');
    expect(audit.items).toMatchObject([
      { actor: `cli:${userInfo().username}`, target: `outbox:${unknown}`, outcome: 'noop' },
      {
        actor: `cli:${userInfo().username}`,
        target: `outbox:${s.outbox.sent}`,
        outcome: 'ok',
        reason: 'billing lost it',
      },
    ]);
    const table = await run('audit');
    expect(table.code, table.err).toBe(0);
    expect(table.out).toMatch(/^\s*ID\s+AT\s+ACTOR\s+ACTION\s+TARGET\s+OUTCOME\s+REASON\n/);
    expect(table.out).toContain('job.create');
    expect((await json('audit', '--target', `outbox:${s.outbox.sent}`, '--since', '10m')).items).toHaveLength(1);
    expect((await run('audit', '--actor', 'nobody')).out).toBe('no audit entry matches\n');
  });

  it('resends the whole outbox only when asked with --all', async () => {
    const all = await json('outbox', 'resend', '--all', '--rate', '1000');
    expect(all).toMatchObject({ kind: 'outbox.resend', status: 'done', filter: {}, total: 3, changed: 3 });
    expect(await f.store.outbox.get(s.outbox.sent)).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('refuses malformed input with a specific message and exit code 2, changing nothing', async () => {
    const before = await snapshot(f.store);
    const cases: [string[], string][] = [
      [['outbox', 'list', '--status', 'queued'], '--status: "queued" is not a status; allowed: pending, sent, dead'],
      [['outbox', 'list', '--limit', '0'], '--limit must be an integer from 1 to 500 (got "0")'],
      [['outbox', 'list', '--before', 'x'], '--before must be an integer'],
      [['outbox', 'list', '--type', 't'.repeat(201)], '--type: must be at most 200 characters'],
      [['outbox', 'list', '--group', 'billing'], "unknown option '--group'"],
      [['outbox', 'show', 'not-a-uuid'], '<messageId> must be a message id, a UUID (got "not-a-uuid")'],
      [['outbox', 'resend'], 'give the message ids to resend, or --all-matching'],
      [['outbox', 'resend', s.outbox.sent, '--all-matching'], 'give either message ids or --all-matching'],
      [
        ['outbox', 'resend', '--all-matching'],
        '--all-matching needs at least one filter flag; to act on every row, use --all',
      ],
      [['outbox', 'resend', '--all', '--status', 'dead'], '--all acts on every row: drop the filter flags'],
      [['outbox', 'resend', '--topic', 'order.created'], 'filter flags select rows only with --all-matching'],
      [['outbox', 'resend', s.outbox.sent, 'nope'], '<messageId> must be a message id, a UUID (got "nope")'],
      [['outbox', 'resend', '--all-matching', '--since', 'soon'], '--since must be an ISO 8601 time'],
      [['outbox', 'resend', s.outbox.sent, '--reason', 'r'.repeat(501)], '--reason: must be at most 500 characters'],
      [['audit', '--since', 'nope'], '--since must be an ISO 8601 time'],
      [['audit', '--limit', '1000'], '--limit must be an integer from 1 to 500 (got "1000")'],
      [['audit', '--actor', ''], '--actor: must not be empty'],
      [
        ['audit', '--action', 'bogus'],
        '--action: must be one of dlq.replay, dlq.ignore, dlq.edit, outbox.resend, job.create, job.cancel',
      ],
      [['audit', 'extra'], 'too many arguments'],
    ];
    for (const [args, message] of cases) {
      const res = await run(...args);
      expect({ args, code: res.code }).toEqual({ args, code: 2 });
      expect(res.err, args.join(' ')).toContain(message);
    }
    expect(await snapshot(f.store)).toBe(before);
  });
});
