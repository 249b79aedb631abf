import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startConsoleApp, startMultiStoreConsoleApp } from '../support/browser-app.js';
import { describeInBrowser } from '../support/browser.js';
import { waitFor } from '../support/wait.js';

// What an operator on call notices: a page that redraws under the cursor, a phone that scrolls sideways, a list that
// opens on the wrong database, a timeline that forgets what happened.

/** Whether the page is wider than the window (it would scroll sideways). */
const overflowsSideways = (page: Page) =>
  page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth');

// Page scripts as text: the tests are type-checked without the DOM's types.
const SELECTION = 'window.getSelection().toString()';

describeInBrowser(
  'console on one store in Chromium: usability',
  () => startConsoleApp('sqlite'),
  (s) => {
    it('keeps keyboard focus and a text selection across a refresh that brings new data', async () => {
      const { app, page } = s;
      app.failing.add('order-focus-1');
      await app.deadLetter(await app.order('order-focus-1'), 'dead');
      await page.goto(`${app.url}#/dead-letters`);
      const table = page.getByRole('table', { name: /^Dead letters/ });
      await table.waitFor();

      // Focus a link in the list and select the text of a cell that will stay as it is.
      const link = table.getByRole('link').first();
      await link.focus();
      const focused = await link.textContent();
      await page.evaluate(`{
        const cell = [...document.querySelectorAll('td')].find((td) => td.textContent.includes('payment provider'));
        if (!cell) throw new Error('no error cell');
        window.getSelection().selectAllChildren(cell);
      }`);
      const selected = await page.evaluate<string>(SELECTION);
      expect(selected).toContain('payment provider declined order order-focus-1');

      // New data: another dead letter appears in the list on a later refresh.
      app.failing.add('order-focus-2');
      const second = await app.order('order-focus-2');
      await app.deadLetter(second, 'dead');
      await table.getByRole('link', { name: second }).waitFor();

      await expect(page.evaluate('document.activeElement?.textContent')).resolves.toBe(focused);
      await expect(page.evaluate('document.activeElement?.tagName')).resolves.toBe('A');
      await expect(page.evaluate(SELECTION)).resolves.toBe(selected);
    });

    it('fits a 390 px wide phone: nothing scrolls sideways, the header keeps the name readable', async () => {
      const { app, page } = s;
      app.failing.add('order-phone');
      const messageId = await app.order('order-phone');
      await app.deadLetter(messageId, 'dead');
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        for (const [route, ready] of [
          ['#/overview', page.getByRole('heading', { name: 'Overview', level: 1 })],
          ['#/outbox', page.getByRole('table', { name: /^Outbox/ })],
          ['#/dead-letters', page.getByRole('table', { name: /^Dead letters/ })],
          [`#/messages/${messageId}`, page.getByRole('list', { name: 'Timeline' })],
          ['#/audit', page.getByRole('heading', { name: 'Audit log', level: 1 })],
        ] as const) {
          await page.goto(`${app.url}${route}`);
          await ready.waitFor();
          expect(await overflowsSideways(page), `${route} scrolls sideways at 390 px`).toBe(false);
          // The signed-in name sits on the header's dark background, inside it.
          const [name, header] = await Promise.all([
            page.locator('#who-name').boundingBox(),
            page.locator('header.top').boundingBox(),
          ]);
          expect(name && header).toBeTruthy();
          expect(name!.x).toBeGreaterThanOrEqual(header!.x);
          expect(name!.x + name!.width).toBeLessThanOrEqual(header!.x + header!.width + 0.5);
          expect(name!.y + name!.height).toBeLessThanOrEqual(header!.y + header!.height + 0.5);
        }
      } finally {
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    });

    it('shows every confirm of a resent message, in the order things happened', async () => {
      const { app, page } = s;
      const messageId = await app.order('order-resent');
      await waitFor('the first handling', () => app.handled.includes('order-resent'));
      await page.goto(`${app.url}#/messages/${messageId}`);
      const card = page.getByRole('region', { name: 'Outbox row' });
      await card.getByText('sent', { exact: true }).waitFor();
      await card.getByRole('button', { name: 'Resend' }).click();
      const dialog = page.getByRole('dialog', { name: /^Resend/ });
      await dialog.getByRole('button', { name: 'Resend' }).click();
      await dialog.waitFor({ state: 'detached' });

      const timeline = page.getByRole('list', { name: 'Timeline' });
      await timeline.getByText('Resend requested').waitFor();
      await waitFor('the second confirm', async () => {
        const events = await timeline.locator('.event').allTextContents();
        return events.filter((e) => e === 'Publish confirmed by the broker').length === 2;
      });
      const events = await timeline.locator('.event').allTextContents();
      expect(events).toEqual([
        'Written to the outbox',
        'Publish confirmed by the broker',
        'Handled (inbox recorded)',
        'Resend requested',
        'Publish confirmed by the broker',
      ]);
    });
  },
);

describeInBrowser(
  'console over two stores in Chromium: which store a list opens on',
  startMultiStoreConsoleApp,
  (s) => {
    it('opens the dead letters, the audit log and the jobs on the store that holds the open dead letters', async () => {
      const { app, page } = s;
      app.failing.add('order-where');
      const messageId = await app.order('order-where');
      await app.deadLetter(messageId, 'dead');
      const picker = page.getByLabel('Store', { exact: true });
      const nav = (label: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label });
      // The first store, "orders", holds the outbox only; "billing" the open dead letter.
      await page.goto(`${app.url}#/overview`);
      await page.getByRole('link', { name: '1 open in billing' }).waitFor();
      await nav('Dead letters').click();
      await page.getByRole('link', { name: messageId }).waitFor();
      await expect(picker.inputValue()).resolves.toBe('billing');
      for (const [label, heading] of [
        ['Audit', 'Audit log'],
        ['Jobs', 'Jobs'],
      ] as const) {
        await nav(label).click();
        await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
        await expect(picker.inputValue()).resolves.toBe('billing');
      }
      // The outbox list opens where the outbox rows are.
      await nav('Outbox').click();
      await page.getByRole('table', { name: /^Outbox.*in store orders/ }).waitFor();
      await expect(picker.inputValue()).resolves.toBe('orders');
      // A store the reader picks stays chosen from list to list.
      await picker.selectOption('billing');
      await page.waitForURL(/#\/outbox\?store=billing/);
      await nav('Dead letters').click();
      await page.waitForURL(/#\/dead-letters\?store=billing/);
      await picker.selectOption('orders');
      await nav('Outbox').click();
      await page.waitForURL(/#\/outbox\?store=orders/);
    });
  },
);
