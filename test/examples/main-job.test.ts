import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exited, spawnTs } from '../support/spawn.js';

describe('the main job (npm start) on the embedded default', () => {
  it('produces orders, relays them, consumes each once, and replays the ones that failed', async () => {
    const data = mkdtempSync(join(tmpdir(), 'surety-main-'));
    try {
      const child = spawnTs('../examples/order-service/main.ts', {}, [
        '--orders',
        '8',
        '--interval',
        '20',
        '--data',
        data,
      ]);
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const end = await exited(child);
      expect(end.code, end.stderr).toBe(0);
      const consumed = out.split('\n').filter((l) => l.startsWith('billing  <- order.created'));
      expect(consumed).toHaveLength(8);
      expect(new Set(consumed.map((l) => /\(id ([0-9a-f-]{36})/.exec(l)?.[1])).size).toBe(8);
      // Orders 3 and 7 fail once, land in the dead-letter table and are replayed.
      expect(out.split('\n').filter((l) => l.startsWith('billing  !!'))).toHaveLength(2);
      expect(consumed.filter((l) => l.includes('(replayed)'))).toHaveLength(2);
      expect(out).toMatch(
        /done: 8 orders produced, 8 invoiced .*outbox 0 pending, 8 sent, 0 dead; dead letters 2 resolved, 0 waiting, 0 dead/,
      );

      // A second run resumes from the committed offset: it sees only its own new orders.
      const again = spawnTs('../examples/order-service/main.ts', {}, [
        '--orders',
        '3',
        '--interval',
        '20',
        '--data',
        data,
      ]);
      let out2 = '';
      again.stdout!.on('data', (d: Buffer) => (out2 += d.toString()));
      expect((await exited(again)).code).toBe(0);
      expect(out2.split('\n').filter((l) => l.startsWith('billing  <-'))).toHaveLength(3);
      expect(out2).toMatch(/done: 3 orders produced, 3 invoiced/);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
