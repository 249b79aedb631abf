import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { startAdminServer } from '../../src/admin/index.js';
import { newToken } from '../support/admin-http.js';
import { seedDeadLetters, type AdminTestStore } from '../support/admin-seed.js';
import { describeInBrowser } from '../support/browser.js';
import { uniqueName } from '../support/env.js';
import { storeFixtures } from '../support/stores.js';

// The console's session in a real browser: a sign-in from another tab replaces the cookie (and its CSRF token) under
// an open page, and a mangled address must not break the page.

/** The admin server and the real console over a SQLite store with dead letters seeded by the test. */
async function startSessionApp() {
  const f = await storeFixtures.sqlite('console_session');
  const store = f.store as AdminTestStore;
  const operatorToken = newToken('op');
  const viewerToken = newToken('view');
  const server = await startAdminServer({
    store,
    tokens: [
      { name: 'alice', role: 'operator', token: operatorToken },
      { name: 'victor', role: 'viewer', token: viewerToken },
    ],
    port: 0,
    jobs: { enabled: false },
  });
  return {
    url: `${server.url}/`,
    operatorToken,
    viewerToken,
    store,
    async close() {
      await server.close();
      await f.teardown();
    },
  };
}

/** Signs in from a second tab of the same browser (same cookie jar), as the console's sign-in form does. */
async function signInFromAnotherTab(page: Page, url: string, token: string): Promise<void> {
  const tab = await page.context().newPage();
  try {
    await tab.goto(url);
    await tab.getByRole('button', { name: 'Sign out' }).waitFor();
    const status = await tab.evaluate(
      async (t) =>
        (
          await fetch('api/session', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ token: t }),
          })
        ).status,
      token,
    );
    expect(status).toBe(200);
  } finally {
    await tab.close();
  }
}

describeInBrowser('console session in Chromium', startSessionApp, (s) => {
  /** Opens a fresh dead letter's page and its Ignore dialog, with a reason typed. */
  async function openIgnore(reason: string) {
    const { app, page } = s;
    const [dead] = await seedDeadLetters(app.store, 1, { group: uniqueName('g'), status: 'dead' });
    await page.goto(`${app.url}#/messages/${dead!.messageId}`);
    const card = page.getByRole('region', { name: new RegExp(`^Dead letter ${dead!.id} in group`) });
    await card.getByRole('button', { name: 'Ignore' }).click();
    const dialog = page.getByRole('dialog', { name: `Ignore dead letter ${dead!.id}` });
    await dialog.getByLabel('Reason (required)').fill(reason);
    return { dead: dead!, card, dialog };
  }

  /** Statuses of the POSTs to a dead letter's ignore route, as the page sent them. */
  function ignoreStatuses(page: Page, id: number): number[] {
    const statuses: number[] = [];
    page.on('response', (r) => {
      if (r.request().method() === 'POST' && r.url().includes(`/api/dead-letters/${id}/ignore`))
        statuses.push(r.status());
    });
    return statuses;
  }

  it('reloads the session once and retries an action refused for a stale CSRF token', async () => {
    const { app, page } = s;
    const { dead, card, dialog } = await openIgnore('duplicate, refunded');
    const statuses = ignoreStatuses(page, dead.id);
    // The same operator signs in again in another tab: the cookie now belongs to a session with another token.
    await signInFromAnotherTab(page, app.url, app.operatorToken);

    await dialog.getByRole('button', { name: 'Ignore' }).click();
    await dialog.waitFor({ state: 'detached' });
    await card.getByText('ignored', { exact: true }).waitFor();
    expect(statuses).toEqual([403, 200]);
    expect((await app.store.admin.getDeadLetterById(dead.id))?.status).toBe('ignored');
    const audit = (await app.store.admin.listAudit({ target: `dlq:${dead.id}` }, { limit: 5 })).items;
    expect(audit.map((e) => [e.actor, e.outcome])).toEqual([['alice', 'ok']]);
    await expect(page.getByText('alice (operator)').isVisible()).resolves.toBe(true);
  });

  it('does not retry in the name of someone else who signed in meanwhile', async () => {
    const { app, page } = s;
    const { dead, dialog } = await openIgnore('not mine to do');
    const statuses = ignoreStatuses(page, dead.id);
    await signInFromAnotherTab(page, app.url, app.viewerToken);

    await dialog.getByRole('button', { name: 'Ignore' }).click();
    // The page now shows who is signed in; the action was sent once and refused.
    await page.getByText('victor (viewer)').waitFor();
    expect(statuses).toEqual([403]);
    expect((await app.store.admin.getDeadLetterById(dead.id))?.status).toBe('dead');
    // Back to the operator for the next test.
    await signInFromAnotherTab(page, app.url, app.operatorToken);
    await page.reload();
    await page.getByText('alice (operator)').waitFor();
  });

  it('shows the not-found page for an address with broken %-encoding, on load and on navigation', async () => {
    const { app, page } = s;
    await page.goto(`${app.url}#/messages/%E0%A4%A`);
    await page.getByRole('heading', { name: 'Not found', level: 1 }).waitFor();
    await page.goto(`${app.url}#/overview`);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.evaluate("location.hash = '#/messages/100%'"); // a hashchange, not a load
    await page.getByRole('heading', { name: 'Not found', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Overview' }).last().click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  });
});
