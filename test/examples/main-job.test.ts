import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exited, spawnTs } from '../support/spawn.js';
import { waitFor } from '../support/wait.js';

interface DeadLetter {
  id: number;
  messageId: string;
  key: string;
  status: string;
  lastError: string;
}

interface Lineage {
  outbox: { store: string } | null;
  deadLetters: { store: string; id: number; status: string }[];
  unavailable: unknown[];
}

describe('the main job (npm start) on the embedded default', () => {
  it('produces orders into one database, consumes them into another, serves one console over both, and an operator replays the flagged one', async () => {
    const data = mkdtempSync(join(tmpdir(), 'surety-main-'));
    const children: ChildProcess[] = [];
    try {
      const child = spawnTs('../examples/order-service/main.ts', {}, [
        '--orders',
        '8',
        '--interval',
        '20',
        '--data',
        data,
        '--port',
        '0',
      ]);
      children.push(child);
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const end = exited(child);

      // The console's address and a token for this run are printed for the local user.
      await waitFor('the console address and token', () => /operator token: \S+/.test(out), 60_000);
      const base = /Operations console: (http:\/\/127\.0\.0\.1:\d+\/) \(stores: orders, billing\)/.exec(out)?.[1];
      const token = /operator token: (\S+)/.exec(out)?.[1];
      expect(base).toBeDefined();
      const page = await fetch(base!);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await page.text()).toContain('<title>Surety console</title>');
      expect((await fetch(new URL('api/dead-letters', base))).status).toBe(401);

      const api = (path: string, init: RequestInit = {}) =>
        fetch(new URL(`api/${path}`, base), {
          ...init,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        });
      // Two databases behind one console: the order service's first, so it is the default.
      expect(await (await api('stores')).json()).toEqual({
        stores: [
          { name: 'orders', dialect: 'sqlite', default: true },
          { name: 'billing', dialect: 'sqlite', default: false },
        ],
      });
      // Order 6 is flagged by the fraud check: dead at once in billing's database, waiting for an operator.
      let flagged: DeadLetter | undefined;
      await waitFor('the flagged order in the dead letters', async () => {
        const res = await api('dead-letters?status=dead&store=billing');
        flagged = ((await res.json()) as { items: DeadLetter[] }).items.find((d) => d.key.endsWith('-6'));
        return flagged !== undefined;
      });
      expect(flagged!.lastError).toContain('fraud check flagged the order');
      // The orders database has no dead letters.
      expect((await (await api('dead-letters')).json()) as { items: unknown[]; store: string }).toMatchObject({
        items: [],
        store: 'orders',
      });
      // Its lineage follows it across both: the outbox row in orders, the dead letter in billing.
      const lineage = (await (await api(`messages/${flagged!.messageId}/lineage`)).json()) as Lineage;
      expect(lineage.outbox).toMatchObject({ store: 'orders' });
      expect(lineage.deadLetters).toEqual([
        expect.objectContaining({ store: 'billing', id: flagged!.id, status: 'dead' }),
      ]);
      expect(lineage.unavailable).toEqual([]);

      // The doctor looks at both databases, each finding naming its own.
      const doctor = (await (await api('doctor')).json()) as { checks: { place: string; message: string }[] };
      expect(doctor.checks.filter((c) => c.place === 'consumer').map((c) => c.message)).toContainEqual(
        expect.stringMatching(/^billing: .*dead letter/),
      );
      expect(doctor.checks.some((c) => c.place === 'producer' && c.message.startsWith('orders: '))).toBe(true);

      const replayBody = { method: 'POST', body: JSON.stringify({ reason: 'reviewed: a real customer' }) };
      // Without `store` the replay goes to the default (orders), which does not know the row.
      expect((await api(`dead-letters/${flagged!.id}/replay`, replayBody)).status).toBe(404);
      const replay = await api(`dead-letters/${flagged!.id}/replay?store=billing`, replayBody);
      expect(replay.status, await replay.clone().text()).toBe(200);
      expect(await replay.json()).toMatchObject({ changed: true });

      // The replay passes, so all 8 orders end up invoiced and the run stops by itself.
      const result = await end;
      expect(result.code, result.stderr).toBe(0);
      const consumed = out.split('\n').filter((l) => l.startsWith('billing  <- order.created'));
      expect(consumed).toHaveLength(8);
      expect(new Set(consumed.map((l) => /\(id ([0-9a-f-]{36})/.exec(l)?.[1])).size).toBe(8);
      // Orders 3 and 7 time out once and are replayed by the replay job; order 6 by the operator.
      const failures = out.split('\n').filter((l) => l.startsWith('billing  !!'));
      expect(failures.filter((l) => l.includes('timed out'))).toHaveLength(2);
      expect(failures.filter((l) => l.includes('fraud check'))).toHaveLength(1);
      expect(consumed.filter((l) => l.includes('(replayed)'))).toHaveLength(3);
      expect(consumed.find((l) => / order-\S+-6 /.test(l))).toContain('(replayed)');
      expect(out).toMatch(
        /done: 8 orders produced, 8 invoiced .*outbox 0 pending, 8 sent, 0 dead; dead letters 3 resolved, 0 waiting, 0 dead/,
      );

      // A second run resumes from the committed offset: it sees only its own new orders.
      const again = spawnTs('../examples/order-service/main.ts', {}, [
        '--orders',
        '3',
        '--interval',
        '20',
        '--data',
        data,
        '--port',
        '0',
      ]);
      children.push(again);
      let out2 = '';
      again.stdout!.on('data', (d: Buffer) => (out2 += d.toString()));
      expect((await exited(again)).code).toBe(0);
      expect(out2.split('\n').filter((l) => l.startsWith('billing  <-'))).toHaveLength(3);
      expect(out2).toMatch(/done: 3 orders produced, 3 invoiced/);
    } finally {
      // A failed expectation must not leave a run waiting for its flagged order.
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      rmSync(data, { recursive: true, force: true });
    }
  });
});
