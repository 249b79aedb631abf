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
      s.admin.listDeadLetters({}, { limit: 500 }),
      s.admin.listOutbox({}, { limit: 500 }),
      s.admin.listAudit({}, { limit: 500 }),
      s.admin.listJobs({ limit: 500 }),
      s.admin.lineage(messageId),
    ]);
    const history = await s.admin.lineage((await s.admin.getDeadLetterById(id))!.messageId);
    return JSON.stringify({ dead, outbox, audit, jobs, lineage, history });
  }

  const big = 'x'.repeat(5_000);
  /** Headers for a raw body sent as JSON. */
  const JSON_BODY = { 'content-type': 'application/json' };
  /** A request refused with 400 SURETY_INVALID_INPUT, its first issue at `issue`. */
  const invalid = (
    method: string,
    path: string,
    issue: string,
    message: RegExp,
    body?: unknown,
    headers?: Record<string, string>,
  ): Case => ({ method, path, body, headers, status: 400, code: 'SURETY_INVALID_INPUT', message, issue });
  const cases = (): Case[] => [
    // Lists: bad filters, oversized pages, unknown and repeated keys.
    invalid(
      'GET',
      '/api/dead-letters?status=bogus',
      'query.status',
      /"bogus" is not a status; allowed: pending, replaying/,
    ),
    invalid('GET', '/api/dead-letters?status=', 'query.status', /must not be empty/),
    invalid('GET', '/api/dead-letters?limit=501', 'query.limit', /must be at most 500/),
    invalid('GET', '/api/dead-letters?limit=0', 'query.limit', /must be at least 1/),
    invalid('GET', '/api/dead-letters?limit=ten', 'query.limit', /must be a positive integer/),
    invalid('GET', '/api/dead-letters?before=-3', 'query.before', /must be a positive integer/),
    invalid('GET', '/api/dead-letters?sort=desc', 'query', /Unrecognized key: "sort"/),
    invalid('GET', '/api/dead-letters?status=dead&status=pending', 'query.status', /must be given once/),
    invalid('GET', '/api/dead-letters?poison=yes', 'query.poison', /must be true or false/),
    invalid('GET', '/api/dead-letters?from=yesterday', 'query.from', /ISO 8601 time or epoch milliseconds/),
    invalid('GET', '/api/dead-letters?from=2025-02-30T00:00:00Z', 'query.from', /ISO 8601/),
    invalid('GET', '/api/dead-letters?from=2025-02-01&to=2025-01-01', 'query.to', /must be after "from"/),
    invalid('GET', `/api/dead-letters?group=${'g'.repeat(201)}`, 'query.group', /at most 200 characters/),
    invalid('GET', '/api/outbox?status=replaying', 'query.status', /allowed: pending, sent, dead/),
    invalid('GET', '/api/outbox?limit=100000', 'query.limit', /at most 500/),
    invalid('GET', '/api/outbox?group=g', 'query', /Unrecognized key: "group"/),
    invalid('GET', '/api/outbox?to=1e9', 'query.to', /ISO 8601/),
    invalid('GET', '/api/audit?from=soon', 'query.from', /ISO 8601/),
    invalid('GET', '/api/audit?who=alice', 'query', /Unrecognized key: "who"/),
    invalid('GET', '/api/audit?action=bogus', 'query.action', /must be one of dlq.replay, dlq.ignore, dlq.edit/),
    invalid('GET', '/api/jobs?limit=501', 'query.limit', /at most 500/),
    // The store a request names: one server with a single store serves it as "default".
    invalid(
      'GET',
      '/api/dead-letters?store=billing',
      'query.store',
      /^query\.store: unknown store "billing"; allowed: default$/,
    ),
    invalid(
      'POST',
      `/api/dead-letters/${id}/replay?store=billing`,
      'query.store',
      /unknown store "billing"; allowed: default/,
      {},
    ),
    invalid('GET', '/api/outbox?store=', 'query.store', /must be a store name/),
    invalid('GET', '/api/audit?store=default&store=default', 'query.store', /must be given once/),
    invalid('POST', `/api/dead-letters/${id}/ignore?store=-x`, 'query.store', /must be a store name/, { reason: 'r' }),
    invalid('POST', `/api/outbox/${messageId}/resend?force=1`, 'query', /Unrecognized key: "force"/, {}),
    // Ids in paths.
    invalid('GET', '/api/dead-letters/abc', 'path.id', /positive integer/),
    invalid('GET', '/api/dead-letters/0', 'path.id', /positive integer/),
    invalid('GET', '/api/dead-letters/99999999999999999999', 'path.id', /positive integer/),
    invalid('GET', '/api/outbox/not-a-uuid', 'path.messageId', /message id \(a UUID\)/),
    invalid('GET', '/api/messages/123/lineage', 'path.messageId', /UUID/),
    invalid('GET', '/api/jobs/x1', 'path.id', /positive integer/),
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
    invalid('POST', `/api/dead-letters/${id}/replay`, 'body', /not valid JSON/, '{"reason": "x"', JSON_BODY),
    {
      method: 'POST',
      path: `/api/dead-letters/${id}/replay`,
      body: { reason: big },
      status: 413,
      code: 'SURETY_PAYLOAD_TOO_LARGE',
      message: /larger than 4096 bytes/,
    },
    invalid('POST', `/api/dead-letters/${id}/replay`, 'body', /Unrecognized key: "reasn"/, { reasn: 'typo' }),
    invalid('POST', `/api/dead-letters/${id}/replay`, 'body.reason', /expected string/, { reason: 42 }),
    invalid('POST', `/api/dead-letters/${id}/replay`, 'body.reason', /at most 500 characters/, {
      reason: 'r'.repeat(501),
    }),
    invalid('POST', `/api/dead-letters/${id}/replay`, 'body', /expected object/, '[1,2]', JSON_BODY),
    invalid('POST', '/api/dead-letters/-1/replay', 'path.id', /positive integer/, {}),
    invalid('POST', `/api/dead-letters/${id}/ignore`, 'body.reason', /is required/, {}),
    invalid('POST', `/api/dead-letters/${id}/ignore`, 'body.reason', /is required/),
    invalid('POST', `/api/dead-letters/${id}/ignore`, 'body.reason', /is required \(say why\)/, { reason: '   ' }),
    invalid('POST', `/api/dead-letters/${id}/ignore`, 'body.reason', /at most 500/, { reason: 'r'.repeat(501) }),
    invalid('POST', `/api/dead-letters/${id}/edit`, 'body.body', /is required/, { reason: 'fix' }),
    invalid('POST', `/api/dead-letters/${id}/edit`, 'body.body', /must not be empty/, { body: '', reason: 'fix' }),
    invalid('POST', `/api/dead-letters/${id}/edit`, 'body.body', /is required/, { body: { a: 1 }, reason: 'fix' }),
    invalid('POST', `/api/dead-letters/${id}/edit`, 'body.reason', /is required/, { body: '{}' }),
    invalid('POST', '/api/outbox/xyz/resend', 'path.messageId', /UUID/, {}),
    invalid('POST', `/api/outbox/${messageId}/resend`, 'body.reason', /expected string/, { reason: ['a'] }),
    invalid('POST', '/api/jobs', 'body.kind', /must be one of dlq.replay, dlq.ignore, outbox.resend/, {}),
    invalid('POST', '/api/jobs', 'body.kind', /must be one of/, { kind: 'dlq.delete' }),
    invalid('POST', '/api/jobs', 'body.reason', /is required/, { kind: 'dlq.ignore', filter: { group } }),
    invalid('POST', '/api/jobs', 'body.ratePerSecond', /at least 1/, {
      kind: 'dlq.replay',
      filter: { group },
      ratePerSecond: 0,
    }),
    invalid('POST', '/api/jobs', 'body.ratePerSecond', /at most 10000/, {
      kind: 'dlq.replay',
      filter: { group },
      ratePerSecond: 1e9,
    }),
    // A job over every row is asked for by name, never reached by a missing or emptied filter.
    invalid('POST', '/api/jobs', 'body.filter', /at least one filter, or set "all": true/, { kind: 'dlq.replay' }),
    invalid('POST', '/api/jobs', 'body.filter', /at least one filter/, { kind: 'outbox.resend', filter: {} }),
    invalid('POST', '/api/jobs', 'body.filter', /at least one filter/, { kind: 'dlq.ignore', reason: 'r' }),
    invalid('POST', '/api/jobs', 'body.all', /either a filter or "all", not both/, {
      kind: 'dlq.replay',
      filter: { group },
      all: true,
    }),
    invalid('POST', '/api/jobs', 'body.all', /must be true/, { kind: 'dlq.replay', all: false }),
    invalid('POST', '/api/jobs', 'body.filter.status', /"sent" is not a status/, {
      kind: 'dlq.replay',
      filter: { status: ['sent'] },
    }),
    invalid('POST', '/api/jobs', 'body.filter', /Unrecognized key: "topic"/, {
      kind: 'dlq.replay',
      filter: { topic: 'x' },
    }),
    invalid('POST', '/api/jobs', 'body.filter.from', /ISO 8601/, {
      kind: 'outbox.resend',
      filter: { from: 'last week' },
    }),
    invalid('POST', '/api/jobs', 'body', /./, 'null', JSON_BODY),
    invalid('POST', '/api/jobs/abc/cancel', 'path.id', /positive integer/, {}),
    invalid('POST', '/api/session', 'body.token', /is required/, {}),
    invalid('POST', '/api/session', 'body.token', /is required|expected string/, { token: 7 }),
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
