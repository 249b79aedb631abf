import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/producer/outbox.js';
import { exited, spawnTs } from '../support/spawn.js';
import { cliFixtures, cliRunner, runCli, type CliFixture } from './cli-harness.js';

/** A terminal acts on these: C0 (but the line feed), DEL and C1, as characters. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

// What a hostile producer could put in a message: retitle the window, clear the screen, write the clipboard.
const OSC52 = '\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07';
const KEY = 'k\x1b]0;owned\x07';
const TYPE = 'order.created\x9b2J';
const ERROR = `boom \x1b[2J\x1b[31mERASED\x1b[0m ${OSC52}`;
const BODY = `{"note":"first line"}\nsecond line ${OSC52} \x9b2J\r\nthird line`;
const REASON = 'why \x1b[2J';

/** A dead letter (and its outbox row, with a failed attempt) whose text is full of escape sequences. */
async function seedHostile(f: CliFixture): Promise<{ id: number; messageId: string }> {
  const { store } = f;
  const outbox = new Outbox({ store });
  const messageId = await store.transaction(
    async (tx) => (await outbox.add(tx, { type: 'order.created', key: KEY, payload: { x: 1 } })).messageId,
  );
  const now = Date.now();
  const [row] = await store.outbox.claim({ owner: 'relay-a', limit: 1, now, leaseMs: 60_000, ordered: false });
  await store.outbox.recordFailure({
    seq: row!.seq,
    owner: 'relay-a',
    attempts: 1,
    nextAttemptAt: now + 60_000,
    dead: false,
    error: ERROR,
  });
  const recorded = await store.transaction((tx) =>
    store.deadLetters.recordDeliveryFailure(
      tx,
      {
        messageId,
        group: 'billing',
        topic: 'orders',
        type: TYPE,
        key: KEY,
        version: 1,
        headers: {},
        body: BODY,
        bodyEncoding: 'utf8',
        error: ERROR,
        poison: false,
        now,
      },
      () => ({ status: 'dead', nextRetryAt: null }),
    ),
  );
  return { id: recorded.id, messageId };
}

/** How the escapes read once shown: the same text, each control character written out. */
const shownKey = 'k\\x1b]0;owned\\x07';
const shownOsc52 = '\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07';
const shownError = `boom \\x1b[2J\\x1b[31mERASED\\x1b[0m ${shownOsc52}`;

describe('human output escapes control characters from messages (SQLite)', () => {
  let f: CliFixture;
  let seeded: { id: number; messageId: string };
  const { run: dlq, json: dlqJson } = cliRunner(() => f.dbArgs, 'dlq');
  const { run: outbox } = cliRunner(() => f.dbArgs, 'outbox');

  beforeEach(async () => {
    f = await cliFixtures.sqlite();
    seeded = await seedHostile(f);
  });
  afterEach(() => f.teardown());

  it('dlq list and show: keys, types and errors escaped; the body keeps its lines', async () => {
    const list = await dlq('list');
    expect(list.code, list.err).toBe(0);
    expect(list.out).not.toMatch(RAW_CONTROL);
    expect(list.out).toContain(shownKey);
    expect(list.out).toContain('order.created\\x9b2J');
    expect(list.out).toContain('boom \\x1b[2J\\x1b[31mERASED\\x1b[0m');
    expect(list.out.trim().split('\n')).toHaveLength(2);

    const show = await dlq('show', String(seeded.id));
    expect(show.code, show.err).toBe(0);
    expect(show.out).not.toMatch(RAW_CONTROL);
    expect(show.out).toMatch(new RegExp(`^key:\\s+${escapeRegExp(shownKey)}$`, 'm'));
    expect(show.out).toMatch(new RegExp(`^last error:\\s+${escapeRegExp(shownError)}$`, 'm'));
    expect(show.out).toContain(
      `body (utf8):\n{"note":"first line"}\nsecond line ${shownOsc52} \\x9b2J\\r\nthird line\n\nhistory:\n`,
    );

    // --json keeps the exact text, escaped the JSON way.
    const row = await dlqJson('show', String(seeded.id));
    expect(row).toMatchObject({ key: KEY, type: TYPE, lastError: ERROR, body: BODY });
    expect((await dlq('show', String(seeded.id), '--json')).out).not.toMatch(RAW_CONTROL);
  });

  it('outbox list and show, and the audit log of an action whose reason holds escapes', async () => {
    const list = await outbox('list');
    expect(list.code, list.err).toBe(0);
    expect(list.out).not.toMatch(RAW_CONTROL);
    expect(list.out).toContain(shownKey);

    const show = await outbox('show', seeded.messageId);
    expect(show.code, show.err).toBe(0);
    expect(show.out).not.toMatch(RAW_CONTROL);
    expect(show.out).toMatch(new RegExp(`^key:\\s+${escapeRegExp(shownKey)}$`, 'm'));
    expect(show.out).toContain('boom \\x1b[2J\\x1b[31mERASED'); // the attempt and the dead letter

    const ignore = await dlq('ignore', String(seeded.id), '--reason', REASON);
    expect(ignore.code, ignore.err).toBe(0);
    const audit = await runCli(['audit', ...f.dbArgs]);
    expect(audit.code, audit.err).toBe(0);
    expect(audit.out).not.toMatch(RAW_CONTROL);
    expect(audit.out).toContain('why \\x1b[2J');
  });

  it('an error quoting a malformed argument escapes it too', async () => {
    const res = await outbox('show', `not-an-id${OSC52}`);
    expect(res.code).toBe(2);
    expect(res.err).toBe(`surety: <messageId> must be a message id, a UUID (got "not-an-id${shownOsc52}")\n`);
  });

  it('the bytes a real surety process writes hold no ESC, BEL or C1 control', async () => {
    for (const args of [
      ['dlq', 'list'],
      ['dlq', 'show', String(seeded.id)],
      ['outbox', 'show', seeded.messageId],
    ]) {
      const child = spawnTs('cli/fixtures/surety.ts', {}, [...args, ...f.dbArgs]);
      const chunks: Buffer[] = [];
      child.stdout!.on('data', (d: Buffer) => chunks.push(d));
      const { code, stderr } = await exited(child);
      expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: '' });
      const bytes = Buffer.concat(chunks);
      expect(bytes.length).toBeGreaterThan(0);
      // C0 but the line feed, DEL, and C1 as UTF-8 encodes it (0xC2 0x80-0x9F).
      const raw = [...bytes].flatMap((b, i) =>
        (b < 0x20 && b !== 0x0a) || b === 0x7f || (b === 0xc2 && bytes[i + 1]! >= 0x80 && bytes[i + 1]! <= 0x9f)
          ? [i]
          : [],
      );
      expect({ args, raw }).toEqual({ args, raw: [] });
      expect(bytes.toString('utf8')).toContain(shownKey);
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
