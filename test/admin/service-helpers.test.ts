/** Pure logic of the admin side: times, pacing, origin checks, session cookies, token matching. */
import { describe, expect, it } from 'vitest';
import { hashToken } from '../../src/admin/index.js';
import { parseTime } from '../../src/admin/admin-schemas.js';
import { crossSiteReason } from '../../src/admin/auth/same-origin.js';
import { SessionCodec } from '../../src/admin/auth/session-cookie.js';
import { TokenSet } from '../../src/admin/auth/token-set.js';
import { tokenListSchema } from '../../src/ports/api-token.js';
import { RowPacer } from '../../src/admin/jobs/row-pacer.js';

describe('parseTime', () => {
  it('reads epoch milliseconds and ISO 8601, and refuses anything else', () => {
    expect(parseTime('1738324800000')).toBe(1_738_324_800_000);
    expect(parseTime('2025-01-31T12:00:00Z')).toBe(Date.UTC(2025, 0, 31, 12));
    expect(parseTime('2025-01-31T12:00:00+02:00')).toBe(Date.UTC(2025, 0, 31, 10));
    expect(parseTime('2025-01-31')).toBe(Date.UTC(2025, 0, 31));
    for (const bad of ['yesterday', '2025-02-30', '2025-13-01', '1e9', '', '31/01/2025', '2025-01-31T25:00:00Z']) {
      expect(parseTime(bad), bad).toBeUndefined();
    }
  });
});

describe('RowPacer', () => {
  it('spaces batches by rows / rate from their actual start, with no credit after a stall', () => {
    let t = 0;
    const pacer = new RowPacer(100, () => t);
    expect(pacer.delay()).toBe(0);
    pacer.started(20);
    expect(pacer.delay()).toBe(200);
    t = 150;
    expect(pacer.delay()).toBe(50);
    t = 5_000; // a long stall
    expect(pacer.delay()).toBe(0);
    pacer.started(20);
    t = 5_001;
    expect(pacer.delay()).toBe(199);
  });
});

describe('crossSiteReason', () => {
  const h = (origin?: string, secFetchSite?: string, host = 'ops.local:8090') => ({ origin, secFetchSite, host });
  it('accepts the same host (any scheme, for TLS proxies) and configured origins', () => {
    expect(crossSiteReason(h('http://ops.local:8090', 'same-origin'), [])).toBeUndefined();
    expect(crossSiteReason(h('https://ops.local:8090'), [])).toBeUndefined();
    expect(crossSiteReason(h(undefined, 'same-origin'), [])).toBeUndefined();
    expect(crossSiteReason(h('https://console.example.com'), ['https://console.example.com'])).toBeUndefined();
  });
  it('refuses foreign, null or missing origins and cross-site fetches', () => {
    expect(crossSiteReason(h('https://evil.example'), [])).toMatch(/foreign Origin/);
    expect(crossSiteReason(h('null'), [])).toMatch(/cross-site/);
    expect(crossSiteReason(h('http://ops.local:8091'), [])).toMatch(/foreign/);
    expect(crossSiteReason(h(undefined, undefined), [])).toMatch(/needs an Origin/);
    expect(crossSiteReason(h('http://ops.local:8090', 'cross-site'), [])).toMatch(/Sec-Fetch-Site: cross-site/);
    expect(crossSiteReason(h('http://ops.local:8090', 'same-site'), [])).toMatch(/same-site/);
  });
});

describe('sessions and tokens', () => {
  const tokens = new TokenSet(
    tokenListSchema.parse([
      { name: 'alice', role: 'operator', token: 'alice-token-0123456789' },
      { name: 'victor', role: 'viewer', sha256: hashToken('victor-token-0123456789') },
    ]),
  );

  it('matches a token or its configured hash, and nothing else', () => {
    expect(tokens.verify('alice-token-0123456789')).toMatchObject({ name: 'alice', role: 'operator' });
    expect(tokens.verify('victor-token-0123456789')).toMatchObject({ name: 'victor', role: 'viewer' });
    expect(tokens.verify('alice-token-012345678')).toBeUndefined();
    expect(tokens.verify('')).toBeUndefined();
  });

  it('refuses weak, duplicate or ambiguous token configs', () => {
    expect(tokenListSchema.safeParse([{ name: 'a', role: 'operator', token: 'short' }]).success).toBe(false);
    expect(tokenListSchema.safeParse([{ name: 'a', role: 'root', token: 'x'.repeat(20) }]).success).toBe(false);
    expect(
      tokenListSchema.safeParse([{ name: 'a', role: 'viewer', token: 'x'.repeat(20), sha256: hashToken('y') }]).success,
    ).toBe(false);
    expect(
      tokenListSchema.safeParse([
        { name: 'a', role: 'viewer', token: 'x'.repeat(20) },
        { name: 'a', role: 'viewer', token: 'y'.repeat(20) },
      ]).success,
    ).toBe(false);
    expect(
      () =>
        new TokenSet(
          tokenListSchema.parse([
            { name: 'a', role: 'viewer', token: 'x'.repeat(20) },
            { name: 'b', role: 'operator', sha256: hashToken('x'.repeat(20)) },
          ]),
        ),
    ).toThrow(/same value/);
  });

  it('accepts its own unexpired cookie only, and ends sessions when the token is rotated', () => {
    const codec = new SessionCodec('s'.repeat(32));
    const alice = tokens.verify('alice-token-0123456789')!;
    const { value, session } = codec.issue(alice, 1_000, 60_000);
    const lookup = (name: string) => tokens.byName(name);
    expect(codec.verify(value, 2_000, lookup)).toEqual(session);
    expect(codec.verify(value, 61_000, lookup)).toBeUndefined();
    expect(new SessionCodec('t'.repeat(32)).verify(value, 2_000, lookup)).toBeUndefined();
    expect(codec.verify(`${value}x`, 2_000, lookup)).toBeUndefined();
    expect(codec.verify('garbage', 2_000, lookup)).toBeUndefined();
    const rotated = new TokenSet(
      tokenListSchema.parse([{ name: 'alice', role: 'operator', token: 'new-alice-token-000000' }]),
    );
    expect(codec.verify(value, 2_000, (n) => rotated.byName(n))).toBeUndefined();
  });
});
