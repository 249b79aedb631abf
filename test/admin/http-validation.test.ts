/**
 * Acceptance 6 (HTTP): malformed input to every endpoint gets a 4xx with a specific message that
 * names the field, and changes nothing (rows, history, jobs and audit are as before).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminFixture, type AdminFixture } from '../support/admin-fixture.js';
import { seedDeadLetters, seedOutbox } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';

interface Case {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly status: number;
  readonly code: string;
  /** Matches the error message. */
  readonly message: RegExp;
  /** The first issue's path, where there is one. */
  readonly issue?: string;
}

describe('admin HTTP input validation (SQLite)', () => {
  let fx: AdminFixture;
  let id: number;
  let messageId: string;
  const group = uniqueName('g');

  beforeAll(async () => {
    fx = await startAdminFixture('sqlite', { allowEdit: true, maxBodyBytes: 4_096 });
    id = (await seedDeadLetters(fx.store, 3, { group, status: 'dead' }))[0]!.id;
    messageId = (await seedOutbox(fx.store, 2))[0]!;
  });
  afterAll(async () => fx?.close());

  /** Everything an operator action could change. */
  async function snapshot(): Promise<string> {
    const s = fx.store;
    const [dead, outbox, audit, jobs, lineage] = await Promise.all([
      s.listDeadLetters({}, { limit: 500 }),
      s.listOutbox({}, { limit: 500 }),
      s.listAudit({}, { limit: 500 }),
      s.listJobs({ limit: 500 }),
      s.lineage(messageId),
    ]);
    const history = await s.lineage((await s.getDeadLetterById(id))!.messageId);
    return JSON.stringify({ dead, outbox, audit, jobs, lineage, history });
  }

  const big = 'x'.repeat(5_000);
  const cases = (): Case[] => [
    // Lists: bad filters, oversized pages, unknown and repeated keys.
    {
      method: 'GET',
      path: '/api/dead-letters?status=bogus',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /"bogus" is not a status; allowed: pending, replaying/,
      issue: 'query.status',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?status=',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must not be empty/,
      issue: 'query.status',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?limit=501',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be at most 500/,
      issue: 'query.limit',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?limit=0',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be at least 1/,
      issue: 'query.limit',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?limit=ten',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be a positive integer/,
      issue: 'query.limit',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?before=-3',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be a positive integer/,
      issue: 'query.before',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?sort=desc',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /Unrecognized key: "sort"/,
      issue: 'query',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?status=dead&status=pending',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be given once/,
      issue: 'query.status',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?poison=yes',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be true or false/,
      issue: 'query.poison',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?from=yesterday',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /ISO 8601 time or epoch milliseconds/,
      issue: 'query.from',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?from=2025-02-30T00:00:00Z',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /ISO 8601/,
      issue: 'query.from',
    },
    {
      method: 'GET',
      path: '/api/dead-letters?from=2025-02-01&to=2025-01-01',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be after "from"/,
      issue: 'query.to',
    },
    {
      method: 'GET',
      path: `/api/dead-letters?group=${'g'.repeat(201)}`,
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /at most 200 characters/,
      issue: 'query.group',
    },
    {
      method: 'GET',
      path: '/api/outbox?status=replaying',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /allowed: pending, sent, dead/,
      issue: 'query.status',
    },
    {
      method: 'GET',
      path: '/api/outbox?limit=100000',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /at most 500/,
      issue: 'query.limit',
    },
    {
      method: 'GET',
      path: '/api/outbox?group=g',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /Unrecognized key: "group"/,
      issue: 'query',
    },
    {
      method: 'GET',
      path: '/api/outbox?to=1e9',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /ISO 8601/,
      issue: 'query.to',
    },
    {
      method: 'GET',
      path: '/api/audit?from=soon',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /ISO 8601/,
      issue: 'query.from',
    },
    {
      method: 'GET',
      path: '/api/audit?who=alice',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /Unrecognized key: "who"/,
      issue: 'query',
    },
    {
      method: 'GET',
      path: '/api/jobs?limit=501',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /at most 500/,
      issue: 'query.limit',
    },
    // The store a request names: one server with a single store serves it as "default".
    {
      method: 'GET',
      path: '/api/dead-letters?store=billing',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /^query\.store: unknown store "billing"; allowed: default$/,
      issue: 'query.store',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/replay?store=billing`,
      body: {},
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /unknown store "billing"; allowed: default/,
      issue: 'query.store',
    },
    {
      method: 'GET',
      path: '/api/outbox?store=',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be a store name/,
      issue: 'query.store',
    },
    {
      method: 'GET',
      path: '/api/audit?store=default&store=default',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be given once/,
      issue: 'query.store',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/ignore?store=-x`,
      body: { reason: 'r' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be a store name/,
      issue: 'query.store',
    },
    {
      method: 'POST',
      path: `/api/outbox/${messageId}/resend?force=1`,
      body: {},
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /Unrecognized key: "force"/,
      issue: 'query',
    },
    // Ids in paths.
    {
      method: 'GET',
      path: '/api/dead-letters/abc',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /positive integer/,
      issue: 'path.id',
    },
    {
      method: 'GET',
      path: '/api/dead-letters/0',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /positive integer/,
      issue: 'path.id',
    },
    {
      method: 'GET',
      path: '/api/dead-letters/99999999999999999999',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /positive integer/,
      issue: 'path.id',
    },
    {
      method: 'GET',
      path: '/api/outbox/not-a-uuid',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /message id \(a UUID\)/,
      issue: 'path.messageId',
    },
    {
      method: 'GET',
      path: '/api/messages/123/lineage',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /UUID/,
      issue: 'path.messageId',
    },
    {
      method: 'GET',
      path: '/api/jobs/x1',
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /positive integer/,
      issue: 'path.id',
    },
    // Bodies: not JSON, malformed, too large, unknown or missing fields, wrong types.
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/replay`,
      body: 'reason=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      status: 415,
      code: 'SURETY_UNSUPPORTED_MEDIA_TYPE',
      message: /application\/json/,
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/replay`,
      body: '{"reason": "x"',
      headers: { 'content-type': 'application/json' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /not valid JSON/,
      issue: 'body',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/replay`,
      body: { reason: big },
      status: 413,
      code: 'SURETY_PAYLOAD_TOO_LARGE',
      message: /larger than 4096 bytes/,
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/replay`,
      body: { reasn: 'typo' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /Unrecognized key: "reasn"/,
      issue: 'body',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/replay`,
      body: { reason: 42 },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /expected string/,
      issue: 'body.reason',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/replay`,
      body: { reason: 'r'.repeat(501) },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /at most 500 characters/,
      issue: 'body.reason',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/replay`,
      body: '[1,2]',
      headers: { 'content-type': 'application/json' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /expected object/,
      issue: 'body',
    },
    {
      method: 'POST',
      path: '/api/dead-letters/-1/replay',
      body: {},
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /positive integer/,
      issue: 'path.id',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/ignore`,
      body: {},
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /is required/,
      issue: 'body.reason',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/ignore`,
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /is required/,
      issue: 'body.reason',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/ignore`,
      body: { reason: '   ' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /is required \(say why\)/,
      issue: 'body.reason',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/ignore`,
      body: { reason: 'r'.repeat(501) },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /at most 500/,
      issue: 'body.reason',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/edit`,
      body: { reason: 'fix' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /is required/,
      issue: 'body.body',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/edit`,
      body: { body: '', reason: 'fix' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must not be empty/,
      issue: 'body.body',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/edit`,
      body: { body: { a: 1 }, reason: 'fix' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /is required/,
      issue: 'body.body',
    },
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/edit`,
      body: { body: '{}' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /is required/,
      issue: 'body.reason',
    },
    {
      method: 'POST',
      path: '/api/outbox/xyz/resend',
      body: {},
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /UUID/,
      issue: 'path.messageId',
    },
    {
      method: 'POST',
      path: `/api/outbox/${messageId}/resend`,
      body: { reason: ['a'] },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /expected string/,
      issue: 'body.reason',
    },
    {
      method: 'POST',
      path: '/api/jobs',
      body: {},
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be one of dlq.replay, dlq.ignore, outbox.resend/,
      issue: 'body.kind',
    },
    {
      method: 'POST',
      path: '/api/jobs',
      body: { kind: 'dlq.delete' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /must be one of/,
      issue: 'body.kind',
    },
    {
      method: 'POST',
      path: '/api/jobs',
      body: { kind: 'dlq.ignore', filter: { group } },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /is required/,
      issue: 'body.reason',
    },
    {
      method: 'POST',
      path: '/api/jobs',
      body: { kind: 'dlq.replay', ratePerSecond: 0 },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /at least 1/,
      issue: 'body.ratePerSecond',
    },
    {
      method: 'POST',
      path: '/api/jobs',
      body: { kind: 'dlq.replay', ratePerSecond: 1e9 },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /at most 10000/,
      issue: 'body.ratePerSecond',
    },
    {
      method: 'POST',
      path: '/api/jobs',
      body: { kind: 'dlq.replay', filter: { status: ['sent'] } },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /"sent" is not a status/,
      issue: 'body.filter.status',
    },
    {
      method: 'POST',
      path: '/api/jobs',
      body: { kind: 'dlq.replay', filter: { topic: 'x' } },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /Unrecognized key: "topic"/,
      issue: 'body.filter',
    },
    {
      method: 'POST',
      path: '/api/jobs',
      body: { kind: 'outbox.resend', filter: { from: 'last week' } },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /ISO 8601/,
      issue: 'body.filter.from',
    },
    {
      method: 'POST',
      path: '/api/jobs',
      body: 'null',
      headers: { 'content-type': 'application/json' },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /./,
      issue: 'body',
    },
    {
      method: 'POST',
      path: '/api/jobs/abc/cancel',
      body: {},
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /positive integer/,
      issue: 'path.id',
    },
    {
      method: 'POST',
      path: '/api/session',
      body: {},
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /is required/,
      issue: 'body.token',
    },
    {
      method: 'POST',
      path: '/api/session',
      body: { token: 7 },
      status: 400,
      code: 'SURETY_INVALID_INPUT',
      message: /is required|expected string/,
      issue: 'body.token',
    },
    // Methods and endpoints that do not exist.
    {
      method: 'PUT',
      path: `/api/dead-letters/${id}`,
      body: {},
      status: 404,
      code: 'SURETY_NOT_FOUND',
      message: /no such endpoint/,
    },
    { method: 'GET', path: '/api/dead-letter', status: 404, code: 'SURETY_NOT_FOUND', message: /no such endpoint/ },
  ];

  it('answers every malformed request with a specific 4xx and changes nothing', async () => {
    const before = await snapshot();
    const list = cases();
    expect(list.length).toBeGreaterThan(50);
    for (const c of list) {
      const res = await fx.api.call(c.method, c.path, { token: fx.tokens.operator, body: c.body, headers: c.headers });
      const what = `${c.method} ${c.path} ${JSON.stringify(c.body)?.slice(0, 60)}`;
      expect(res.status, `${what}: ${res.text}`).toBe(c.status);
      expect(res.body.error.code, what).toBe(c.code);
      expect(res.body.error.message, what).toMatch(c.message);
      if (c.issue) expect(res.body.error.issues?.[0]?.path, `${what}: ${res.text}`).toBe(c.issue);
    }
    expect(await snapshot()).toBe(before);
  });

  it('accepts the well-formed neighbours of those requests (the checks are not blanket refusals)', async () => {
    const ok: [string, string, unknown?][] = [
      ['GET', '/api/dead-letters?status=dead,pending&limit=500&poison=false&from=2020-01-01&to=2999-01-01T00:00:00Z'],
      ['GET', `/api/dead-letters?group=${group}&error=BOOM&before=999999`],
      ['GET', '/api/outbox?status=pending&from=0&to=99999999999999'],
      ['GET', '/api/audit?actor=alice&action=dlq.replay'],
      ['GET', '/api/jobs?limit=1'],
      ['GET', '/api/jobs?store=default'],
      ['GET', '/api/stores'],
      ['GET', `/api/dead-letters/${id}?store=default`],
      ['GET', `/api/dead-letters/${id}`],
      ['GET', `/api/outbox/${messageId}`],
      ['GET', `/api/messages/${messageId}/lineage`],
    ];
    for (const [method, path] of ok) {
      const res = await fx.api.call(method, path, { token: fx.tokens.viewer });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
    const dead = await fx.api.call('GET', `/api/dead-letters?group=${group}&error=BOOM`, { token: fx.tokens.viewer });
    expect(dead.body.items).toHaveLength(3);
    // An empty POST body is an empty object; a bare replay works.
    const replay = await fx.api.call('POST', `/api/dead-letters/${id}/replay`, { token: fx.tokens.operator });
    expect(replay.status, replay.text).toBe(200);
  });
});
