/**
 * `surety doctor` with a database that goes away (a proxy in front of PostgreSQL cut for real):
 * a verdict that says the database is unreachable and exit 4, also when only one of several is down.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testEnv } from '../support/env.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { cliFixtures, heartbeat, runCli, twoDatabases, type CliFixture, type TwoDatabases } from './cli-harness.js';

const pgPort = Number(new URL(testEnv.postgresUrl).port || 5432);
const viaProxy = (proxy: TcpProxy) => {
  const url = new URL(testEnv.postgresUrl);
  url.port = String(proxy.port);
  return url.toString();
};

describe('surety doctor with a database down', () => {
  let proxy: TcpProxy;
  beforeEach(async () => {
    proxy = await startTcpProxy(pgPort);
  });
  afterEach(() => proxy.close());

  describe('one database (PostgreSQL)', () => {
    let f: CliFixture;
    beforeEach(async () => {
      f = await cliFixtures.postgres();
    });
    afterEach(() => f.teardown());

    it('healthy while it answers; once it is cut, a verdict naming the database and exit 4', async () => {
      const args = ['doctor', '--database', viaProxy(proxy), '--schema', f.database.schema!];
      await heartbeat(f.store, Date.now());
      expect((await runCli(args)).code).toBe(0);

      await proxy.close();
      const res = await runCli(args);
      expect(res.code, res.err).toBe(4);
      expect(res.err).toBe('');
      expect(res.out).toMatch(
        /^producer\n {2}FAIL {2}the database is unreachable: PostgreSQL: connect ECONNREFUSED 127\.0\.0\.1:\d+ — the outbox and the relays could not be checked\n/,
      );
      expect(res.out).toMatch(
        /^consumer\n {2}FAIL {2}the database is unreachable: .* — the dead letters and the inbox could not be checked$/m,
      );
      expect(res.out).toMatch(/^verdict: producer: the database is unreachable: PostgreSQL: connect ECONNREFUSED/m);
      expect(res.out).toMatch(/^next step: check that the database is up and reachable from here/m);

      const json = await runCli([...args, '--json']);
      expect(json.code).toBe(4);
      const report = JSON.parse(json.out);
      expect(report.verdict).toMatchObject({ place: 'producer', level: 'fail' });
      expect(report.checks.map((c: { id: string }) => c.id)).toEqual(['producer.database', 'consumer.database']);
    });
  });

  describe('two databases, one down', () => {
    let t: TwoDatabases;
    beforeEach(async () => {
      t = await twoDatabases();
    });
    afterEach(() => t.teardown());

    it('checks the other one and names the one that is down', async () => {
      await heartbeat(t.orders.store, Date.now());
      const path = join(t.dir, 'down.yaml');
      const billing = `{ url: ${JSON.stringify(viaProxy(proxy))}, schema: ${t.billing.database.schema} }`;
      writeFileSync(
        path,
        `databases:\n  orders: { url: ${JSON.stringify(t.orders.database.url)} }\n  billing: ${billing}\n`,
      );
      await proxy.close();
      const res = await runCli(['doctor', '--config', path]);
      expect(res.code, res.err).toBe(4);
      expect(res.out).toContain('  ok    orders: no message is waiting to leave the outbox');
      expect(res.out).toMatch(
        /^verdict: producer: billing: the database is unreachable: PostgreSQL: connect ECONNREFUSED/m,
      );
    });
  });
});
