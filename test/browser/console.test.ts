import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startConsoleApp } from '../support/browser-app.js';
import { describeInBrowser, openBrowser, signIn } from '../support/browser.js';
import { waitFor } from '../support/wait.js';

// The console in a real browser: Debian's Chromium, headless, against a live producer, consumer and replay job.

/** The card of the dead letter on a message page, found by its heading. */
const deadLetterCard = (page: Page, id: number) =>
  page.getByRole('region', { name: new RegExp(`^Dead letter ${id} in group`) });

// Edit-then-replay is on for one run and off (hidden) for the other.
for (const [dialect, allowEdit] of [
  ['sqlite', false],
  ['postgres', true],
] as const) {
  describeInBrowser(
    `console in Chromium on ${dialect}`,
    () => startConsoleApp(dialect, { allowEdit }),
    (s) => {
      it('shows a dead letter in the list, replays it from its page and watches it become resolved', async () => {
        const { app, page } = s;
        app.failing.add('order-replay');
        const messageId = await app.order('order-replay');
        const dead = await app.deadLetter(messageId, 'dead');

        await page.goto(app.url);
        await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dead letters' }).click();
        const link = page.getByRole('link', { name: messageId });
        await link.waitFor();
        const row = page.getByRole('row').filter({ has: link });
        await expect(row.getByText('dead', { exact: true }).count()).resolves.toBe(1);
        await expect(row.getByText(`payment provider declined order order-replay`).count()).resolves.toBe(1);

        await link.click();
        const card = deadLetterCard(page, dead.id);
        await card.waitFor();
        // One store: no selector, and nothing on the page names a store.
        await expect(page.getByLabel('Store', { exact: true }).isHidden()).resolves.toBe(true);
        await expect(card.getByRole('heading').textContent()).resolves.toBe(
          `Dead letter ${dead.id} in group ${app.group}`,
        );
        await card.getByText('dead', { exact: true }).waitFor();
        // The payment provider is fixed: the replay will now succeed.
        app.failing.delete('order-replay');
        await card.getByRole('button', { name: 'Replay', exact: true }).click();
        const dialog = page.getByRole('dialog', { name: `Replay dead letter ${dead.id}` });
        await dialog.getByLabel('Reason (optional)').fill('provider fixed');
        await dialog.getByRole('button', { name: 'Replay', exact: true }).click();
        await dialog.waitFor({ state: 'detached' });
        await page.getByRole('status').getByText(`Replay of dead letter ${dead.id} requested.`).waitFor();

        // The replay job runs it; the page refreshes by itself until it shows the outcome.
        await card.getByText('resolved', { exact: true }).waitFor({ timeout: 20_000 });
        const timeline = page.getByRole('list', { name: 'Timeline' });
        await timeline.getByText('Replay requested').waitFor();
        await timeline.getByText('Resolved').waitFor();
        await expect(timeline.getByText('Publish confirmed by the broker').count()).resolves.toBe(1);
        await expect(card.getByRole('button', { name: 'Replay', exact: true }).isDisabled()).resolves.toBe(true);

        expect((await app.store.deadLetters.getDeadLetter(messageId, app.group))?.status).toBe('resolved');
        expect(app.handled.filter((k) => k === 'order-replay')).toHaveLength(1);
      });

      it('ignores a dead letter only with a reason, and the audit log shows who and why', async () => {
        const { app, page } = s;
        app.failing.add('order-ignore');
        const messageId = await app.order('order-ignore');
        const dead = await app.deadLetter(messageId, 'dead');
        await page.goto(`${app.url}#/messages/${messageId}`);
        const card = deadLetterCard(page, dead.id);
        await card.getByRole('button', { name: 'Ignore' }).click();
        const dialog = page.getByRole('dialog', { name: `Ignore dead letter ${dead.id}` });
        await dialog.getByRole('button', { name: 'Ignore' }).click();
        // Without a reason nothing is sent.
        await dialog.getByRole('alert').getByText('Give a reason').waitFor();
        expect((await app.store.deadLetters.getDeadLetter(messageId, app.group))?.status).toBe('dead');

        await dialog.getByLabel('Reason (required)').fill('duplicate order, refunded by hand');
        await dialog.getByRole('button', { name: 'Ignore' }).click();
        await dialog.waitFor({ state: 'detached' });
        await card.getByText('ignored', { exact: true }).waitFor();
        expect(await app.store.deadLetters.getDeadLetter(messageId, app.group)).toMatchObject({
          status: 'ignored',
          ignoredReason: 'duplicate order, refunded by hand',
        });

        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
        const entry = page.getByRole('row').filter({ hasText: 'duplicate order, refunded by hand' });
        await entry.waitFor();
        await expect(entry.getByRole('cell', { name: 'dlq.ignore' }).count()).resolves.toBe(1);
        await expect(entry.getByRole('cell', { name: 'alice', exact: true }).count()).resolves.toBe(1);
        await expect(entry.getByRole('cell', { name: `dlq:${dead.id}` }).count()).resolves.toBe(1);
        await expect(entry.getByText('ok', { exact: true }).count()).resolves.toBe(1);
      });

      it('refreshes live without losing typed filter input or an open dialog', async () => {
        const { app, page } = s;
        await page.goto(`${app.url}#/dead-letters`);
        const typeFilter = page.getByLabel('Type');
        await typeFilter.fill('order.cre');
        app.failing.add('order-live');
        const messageId = await app.order('order-live');
        // The new dead letter shows up without a reload, and the typed (not yet applied) filter is still there.
        await page.getByRole('link', { name: messageId }).waitFor();
        expect(await typeFilter.inputValue()).toBe('order.cre');

        await page.getByRole('link', { name: messageId }).click();
        const dead = await app.deadLetter(messageId, 'dead');
        await deadLetterCard(page, dead.id).getByRole('button', { name: 'Ignore' }).click();
        const dialog = page.getByRole('dialog', { name: `Ignore dead letter ${dead.id}` });
        await dialog.getByLabel('Reason (required)').fill('half-typed reason');
        // Two live refreshes of the page underneath leave the dialog open with what was typed.
        await page.waitForResponse((r) => r.url().includes('/lineage'), { timeout: 5_000 });
        await page.waitForResponse((r) => r.url().includes('/lineage'), { timeout: 5_000 });
        await expect(dialog.isVisible()).resolves.toBe(true);
        expect(await dialog.getByLabel('Reason (required)').inputValue()).toBe('half-typed reason');
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await dialog.waitFor({ state: 'detached' });
        expect((await app.store.deadLetters.getDeadLetter(messageId, app.group))?.status).toBe('dead');
      });

      it('filters the list with the API’s filters and pages by keyset', async () => {
        const { app, page } = s;
        app.failing.add('order-page-a');
        app.failing.add('order-page-b');
        const a = await app.order('order-page-a');
        const b = await app.order('order-page-b');
        await app.deadLetter(a, 'dead');
        await app.deadLetter(b, 'dead');
        await page.goto(`${app.url}#/dead-letters`);
        const form = page.getByRole('search', { name: 'Filter dead letters' });
        await form.getByLabel('Key').fill('order-page-b');
        await form.getByRole('button', { name: 'Apply filters' }).click();
        await page.getByRole('link', { name: b }).waitFor();
        await expect(page.getByRole('link', { name: a }).count()).resolves.toBe(0);
        expect(page.url()).toContain('key=order-page-b');

        // One row per page: the newest first, then "Older" reaches the other.
        await page.goto(`${app.url}#/dead-letters?error=declined%20order%20order-page&limit=1`);
        await page.getByRole('link', { name: b }).waitFor();
        await page.getByRole('button', { name: 'Older' }).click();
        await page.getByRole('link', { name: a }).waitFor();
        await expect(page.getByRole('link', { name: b }).count()).resolves.toBe(0);
        await page.getByRole('button', { name: 'Newer' }).click();
        await page.getByRole('link', { name: b }).waitFor();

        // A bad filter is the API's error, shown on the page.
        await page.goto(`${app.url}#/dead-letters?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z`);
        await page.getByRole('alert').getByText('must be after "from"').waitFor();
      });

      it('replays every dead letter matching a filter as a bulk job and shows its progress', async () => {
        const { app, page } = s;
        const keys = ['order-bulk-1', 'order-bulk-2', 'order-bulk-3'];
        for (const key of keys) app.failing.add(key);
        const ids = await Promise.all(keys.map((key) => app.order(key)));
        for (const id of ids) await app.deadLetter(id, 'dead');
        for (const key of keys) app.failing.delete(key);

        await page.goto(`${app.url}#/dead-letters?error=declined%20order%20order-bulk`);
        for (const id of ids) await page.getByRole('link', { name: id }).waitFor();
        await page
          .getByRole('group', { name: 'Bulk actions' })
          .getByRole('button', { name: 'Replay all matching…' })
          .click();
        const dialog = page.getByRole('dialog', { name: 'Replay all matching…' });
        await dialog.getByText('error = declined order order-bulk').waitFor();
        // The confirmation says how many rows the job is about to act on.
        await dialog.getByText('3 dead letters match now.').waitFor();
        await dialog.getByRole('button', { name: 'Replay all matching…' }).click();
        await dialog.waitFor({ state: 'detached' });
        await page
          .getByRole('status')
          .getByText(/^Job \d+ started over 3 dead letters/)
          .waitFor();

        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs' }).click();
        const job = page.getByRole('row').filter({ hasText: 'dlq.replay' }).filter({ hasText: 'order-bulk' });
        await job.getByText('done', { exact: true }).waitFor({ timeout: 20_000 });
        await expect(job.getByRole('progressbar').getAttribute('value')).resolves.toBe('3');
        await expect(job.getByRole('progressbar').getAttribute('max')).resolves.toBe('3');
        await waitFor('the replay job to resolve the three', async () => {
          const rows = await Promise.all(ids.map((id) => app.store.deadLetters.getDeadLetter(id, app.group)));
          return rows.every((r) => r?.status === 'resolved');
        });
        for (const key of keys) expect(app.handled.filter((k) => k === key)).toHaveLength(1);
      });

      it('asks before a bulk action with no filter, naming what it covers and how many rows that is', async () => {
        const { app, page } = s;
        /** Opens the bulk dialog and returns it with the count it shows, between the store's counts around it. */
        const open = async (route: string, label: string, count: () => Promise<number>) => {
          await page.goto(`${app.url}#/${route}`);
          const before = await count();
          await page.getByRole('group', { name: 'Bulk actions' }).getByRole('button', { name: label }).click();
          const dialog = page.getByRole('dialog', { name: label });
          const text = (await dialog.getByText(/ match(es)? now[.:]/).textContent()) ?? '';
          const shown = Number(/(\d+) [^.]* match(es)? now[.:]/.exec(text)?.[1]);
          const after = await count();
          expect(shown).toBeGreaterThanOrEqual(Math.min(before, after));
          expect(shown).toBeLessThanOrEqual(Math.max(before, after));
          return dialog;
        };
        const jobsBefore = (await app.store.admin.listJobs({ limit: 1 })).items[0]?.id;
        // A replay with no filter covers pending and dead rows, never ignored or resolved ones.
        const openDeadLetters = async () =>
          (await app.store.admin.listDeadLetters({ status: ['pending', 'dead'] }, { limit: 500 })).items.length;
        const replay = await open('dead-letters', 'Replay all matching…', openDeadLetters);
        await replay.getByText('No filter is set: this acts on every pending or dead dead letter.').waitFor();
        await replay.getByRole('button', { name: 'Cancel' }).click();
        await replay.waitFor({ state: 'detached' });

        const outboxRows = async () => (await app.store.admin.listOutbox({}, { limit: 500 })).items.length;
        const resend = await open('outbox', 'Resend all matching…', outboxRows);
        await resend.getByText('No filter is set: this acts on every outbox message, sent ones included.').waitFor();
        await resend.getByRole('button', { name: 'Cancel' }).click();
        await resend.waitFor({ state: 'detached' });
        expect((await app.store.admin.listJobs({ limit: 1 })).items[0]?.id).toBe(jobsBefore);
      });

      it(`${allowEdit ? 'edits a dead letter’s body, then replays it' : 'hides edit-then-replay when the server does not allow it'}`, async () => {
        const { app, page } = s;
        app.failing.add('order-edit');
        const messageId = await app.order('order-edit');
        const dead = await app.deadLetter(messageId, 'dead');
        await page.goto(`${app.url}#/messages/${messageId}`);
        const card = deadLetterCard(page, dead.id);
        await card.getByRole('button', { name: 'Replay', exact: true }).waitFor();
        const edit = card.getByRole('button', { name: 'Edit then replay' });
        if (!allowEdit) {
          await expect(edit.count()).resolves.toBe(0);
          return;
        }
        await edit.click();
        const dialog = page.getByRole('dialog', { name: `Edit and replay dead letter ${dead.id}` });
        const body = dialog.getByLabel('Message body (JSON)');
        expect(JSON.parse(await body.inputValue())).toEqual({ key: 'order-edit' });
        await body.fill(JSON.stringify({ key: 'order-edited' }));
        await dialog.getByLabel('Reason (required)').fill('wrong key in the original');
        await dialog.getByRole('button', { name: 'Edit then replay' }).click();
        await dialog.waitFor({ state: 'detached' });
        await card.getByText('resolved', { exact: true }).waitFor({ timeout: 20_000 });
        // The previous body stays in the timeline.
        await page.getByRole('list', { name: 'Timeline' }).getByText('Body edited').waitFor();
        expect(app.handled).toContain('order-edited');
        expect(app.handled).not.toContain('order-edit');
      });

      it('resends an outbox message from the outbox list; the consumer skips it as a duplicate', async () => {
        const { app, page } = s;
        const messageId = await app.order('order-resend');
        await waitFor('the order to be handled', () => app.handled.includes('order-resend'));
        const sentRow = async () => (await app.store.admin.listOutbox({ key: 'order-resend' }, { limit: 1 })).items[0]!;
        const firstSentAt = (await sentRow()).sentAt!;
        await page.goto(`${app.url}#/outbox`);
        const form = page.getByRole('search', { name: 'Filter outbox' });
        await form.getByLabel('sent').check();
        await form.getByLabel('Key').fill('order-resend');
        await form.getByRole('button', { name: 'Apply filters' }).click();
        await page.getByRole('link', { name: messageId }).click();
        await page.getByRole('region', { name: 'Outbox row' }).getByRole('button', { name: 'Resend' }).click();
        const dialog = page.getByRole('dialog', { name: /^Resend order\.created/ });
        await dialog.getByRole('button', { name: 'Resend' }).click();
        await dialog.waitFor({ state: 'detached' });
        const timeline = page.getByRole('list', { name: 'Timeline' });
        await timeline.getByText('Resend requested').waitFor();
        await expect(timeline.getByText(' by alice').count()).resolves.toBeGreaterThan(0);
        await waitFor('the relay to publish it again', async () => {
          const row = await sentRow();
          return row.status === 'sent' && row.sentAt! > firstSentAt;
        });
        // The log is ordered: once a later order is handled, the consumer has seen the resent copy too.
        await app.order('order-after-resend');
        await waitFor('a later order to be handled', () => app.handled.includes('order-after-resend'));
        expect(app.handled.filter((k) => k === 'order-resend')).toHaveLength(1);
      });

      it('shows the overview with counts, throughput and the doctor’s verdict', async () => {
        const { app, page } = s;
        await page.goto(`${app.url}#/overview`);
        await page.getByRole('img', { name: /^Throughput, last 60 minutes: \d+ sent, \d+ consumed/ }).waitFor();
        const consumers = page.getByRole('region', { name: 'Consumers (dead letters)' });
        await consumers.getByRole('link', { name: /^\d+ dead$/ }).waitFor();
        await page.getByRole('region', { name: 'Verdict' }).getByText('Next step:').waitFor();
        await page
          .getByRole('table', { name: /Open dead letters/ })
          .getByText('payment provider declined')
          .first()
          .waitFor();
      });

      it('lets a viewer see the lists but not act, and the API refuses a forced request', async () => {
        const { app } = s;
        const viewer = await openBrowser();
        try {
          const { page } = viewer;
          await page.goto(app.url);
          await page.getByLabel('API token').fill('not-a-token-at-all');
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.getByRole('alert').getByText('Sign-in failed').waitFor();

          await signIn(page, app.url, app.viewerToken);
          await page.getByText('victor (viewer)').waitFor();
          app.failing.add('order-viewer');
          const messageId = await app.order('order-viewer');
          const dead = await app.deadLetter(messageId, 'dead');
          await page.goto(`${app.url}#/dead-letters?status=dead`);
          await page.getByRole('link', { name: messageId }).click();
          const card = deadLetterCard(page, dead.id);
          await card.getByRole('button', { name: 'Replay', exact: true }).waitFor();
          const actions = page.getByRole('button', { name: /^(Replay|Ignore|Edit then replay|Resend)$/ });
          expect(await actions.count()).toBeGreaterThanOrEqual(3);
          for (const button of await actions.all()) expect(await button.isDisabled()).toBe(true);
          await page.goto(`${app.url}#/dead-letters`);
          await page.getByRole('link', { name: messageId }).waitFor();
          await expect(page.getByRole('group', { name: 'Bulk actions' }).count()).resolves.toBe(0);

          // Forced from the page itself, with the session's CSRF token: still refused for the role.
          const forced = await page.evaluate(async (id) => {
            const session = (await (await fetch('api/session')).json()) as { csrfToken: string };
            const res = await fetch(`api/dead-letters/${id}/replay`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
              body: '{}',
            });
            return { status: res.status, body: (await res.json()) as { error: { code: string } } };
          }, dead.id);
          expect(forced.status).toBe(403);
          expect(forced.body.error.code).toBe('SURETY_FORBIDDEN');
          expect((await app.store.deadLetters.getDeadLetter(messageId, app.group))?.status).toBe('dead');
          expect(viewer.errors).toEqual([]);
        } finally {
          await viewer.close();
        }
      });
    },
  );
}
