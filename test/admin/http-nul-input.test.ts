/**
 * PostgreSQL text cannot hold U+0000. A NUL in any text the API passes on to the store (filters,
 * reasons, an edited body) is the client's mistake: 400 SURETY_INVALID_INPUT naming the field, and
 * no error in the server's log, instead of 503 SURETY_STORE_FAILED.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminFixture, type AdminFixture } from '../support/admin-fixture.js';
import { seedDeadLetters, seedOutbox } from '../support/admin-seed.js';
import { uniqueName } from '../support/env.js';

describe('a NUL in admin input (PostgreSQL)', () => {
  let fx: AdminFixture;
  let deadLetterId: number;
  let messageId: string;

  beforeAll(async () => {
    fx = await startAdminFixture('postgres', { allowEdit: true });
    deadLetterId = (await seedDeadLetters(fx.store, 1, { group: uniqueName('g'), status: 'dead' }))[0]!.id;
    messageId = (await seedOutbox(fx.store, 1))[0]!;
  });
  afterAll(async () => fx?.close());

  const errorLines = () => fx.logs.filter((l) => (JSON.parse(l) as { level: number }).level >= 50);

  it.each([
    ['/api/outbox?type=%00', 'query.type'],
    ['/api/outbox?key=a%00b', 'query.key'],
    ['/api/outbox?error=%00', 'query.error'],
    ['/api/dead-letters?group=%00', 'query.group'],
    ['/api/dead-letters?type=x%00', 'query.type'],
    ['/api/audit?actor=%00', 'query.actor'],
    ['/api/audit?target=%00', 'query.target'],
  ])('GET %s is 400 naming %s', async (path, field) => {
    const res = await fx.api.call('GET', path, { token: fx.tokens.viewer });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('SURETY_INVALID_INPUT');
    expect(res.body.error.message).toBe(`${field}: must not contain U+0000 (NUL)`);
    expect(errorLines()).toEqual([]);
  });

  it.each([
    ['a job filter', '/api/jobs', { kind: 'dlq.replay', filter: { type: 'a\u0000' } }, 'body.filter.type'],
    ['a reason', () => `/api/dead-letters/${deadLetterId}/replay`, { reason: 'fixed\u0000' }, 'body.reason'],
    ['a resend reason', () => `/api/outbox/${messageId}/resend`, { reason: '\u0000' }, 'body.reason'],
    [
      'an edited body',
      () => `/api/dead-letters/${deadLetterId}/edit`,
      { body: '{"a":"\u0000"}', reason: 'fix' },
      'body.body',
    ],
  ])('POST with a NUL in %s is 400 naming the field and changes nothing', async (_what, path, body, field) => {
    const before = await fx.store.admin.listAudit({}, { limit: 50 });
    const url = typeof path === 'function' ? path() : path;
    const res = await fx.api.call('POST', url, { token: fx.tokens.operator, body });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('SURETY_INVALID_INPUT');
    expect(res.body.error.message).toBe(`${field}: must not contain U+0000 (NUL)`);
    expect(await fx.store.admin.listAudit({}, { limit: 50 })).toEqual(before);
    expect(errorLines()).toEqual([]);
  });
});
