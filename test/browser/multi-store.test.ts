import { expect, it } from 'vitest';
import { startMultiStoreConsoleApp } from '../support/browser-app.js';
import { describeInBrowser } from '../support/browser.js';

// One console over two databases: the producer's outbox in store "orders", the consumer's inbox and dead letters in
// store "billing" (two SQLite files), in a real browser.
describeInBrowser('console over two stores in Chromium', startMultiStoreConsoleApp, (s) => {
  it('follows a message from the outbox in "orders" to its dead letter in "billing", and replays it there', async () => {
    const { app, page } = s;
    app.failing.add('order-across');
    const messageId = await app.order('order-across');
    const dead = await app.deadLetter(messageId, 'dead');
    // Each side lives in its own database only.
    expect(await app.orders.deadLetters.getDeadLetter(messageId, app.group)).toBeUndefined();
    expect((await app.billing.admin.listOutbox({ key: 'order-across' }, { limit: 1 })).items).toEqual([]);

    // The list shows one store at a time: billing's dead letter is not in orders.
    await page.goto(`${app.url}#/dead-letters`);
    const picker = page.getByLabel('Store', { exact: true });
    await expect(picker.isVisible()).resolves.toBe(true);
    await picker.selectOption('orders');
    await page.waitForURL(/store=orders/);
    await page
      .getByRole('table', { name: /in store orders/ })
      .or(page.getByText('Nothing here yet.'))
      .waitFor();
    await expect(page.getByRole('link', { name: messageId }).count()).resolves.toBe(0);
    await picker.selectOption('billing');
    await page.waitForURL(/store=billing/);
    const link = page.getByRole('link', { name: messageId });
    await link.waitFor();
    await page.getByRole('table', { name: /^Dead letters in store billing/ }).waitFor();
    // The store stays chosen when moving between lists.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Outbox' }).click();
    await page.waitForURL(/#\/outbox\?store=billing/);
    await expect(picker.inputValue()).resolves.toBe('billing');
    await page.goBack();
    await link.click();

    // One timeline across both databases, each event naming its store.
    const timeline = page.getByRole('list', { name: 'Timeline' });
    const event = (text: string) => timeline.getByRole('listitem').filter({ hasText: text });
    await event('Written to the outbox').getByText('orders', { exact: true }).waitFor();
    await event('Publish confirmed by the broker').getByText('orders', { exact: true }).waitFor();
    await event('Gave up: dead').getByText('billing', { exact: true }).waitFor();
    await page.getByRole('region', { name: 'Outbox row in store orders' }).waitFor();
    // The store selector rests on a page that shows every store.
    await expect(picker.isDisabled()).resolves.toBe(true);

    const card = page.getByRole('region', { name: `Dead letter ${dead.id} in group ${app.group} in store billing` });
    await card.getByText('dead', { exact: true }).waitFor();
    app.failing.delete('order-across');
    await card.getByRole('button', { name: 'Replay', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `Replay dead letter ${dead.id} in store billing` });
    await dialog.getByLabel('Reason (optional)').fill('provider fixed');
    const replayed = page.waitForRequest((r) => r.method() === 'POST' && r.url().includes('/replay'));
    await dialog.getByRole('button', { name: 'Replay', exact: true }).click();
    const request = new URL((await replayed).url());
    expect(request.pathname).toMatch(new RegExp(`/api/dead-letters/${dead.id}/replay$`));
    expect(request.searchParams.get('store')).toBe('billing');
    await dialog.waitFor({ state: 'detached' });

    await card.getByText('resolved', { exact: true }).waitFor({ timeout: 20_000 });
    await event('Resolved').getByText('billing', { exact: true }).waitFor();
    expect((await app.billing.deadLetters.getDeadLetter(messageId, app.group))?.status).toBe('resolved');
    expect(app.handled.filter((k) => k === 'order-across')).toHaveLength(1);

    // The action is audited in the store acted upon.
    await page.goto(`${app.url}#/audit?store=billing`);
    const entry = page.getByRole('row').filter({ hasText: 'provider fixed' });
    await entry.getByRole('cell', { name: 'dlq.replay' }).waitFor();
    await entry.getByRole('link', { name: `dlq:${dead.id}` }).click();
    await page.waitForURL(new RegExp(`#/messages/${messageId}$`));
    await page.goto(`${app.url}#/audit?store=orders`);
    await page.getByText('Nothing here yet.').waitFor();
  });

  it('runs a bulk job in the store the list shows, and lists it under that store', async () => {
    const { app, page } = s;
    const keys = ['order-bulk-1', 'order-bulk-2'];
    for (const key of keys) app.failing.add(key);
    const ids = await Promise.all(keys.map((key) => app.order(key)));
    for (const id of ids) await app.deadLetter(id, 'dead');

    await page.goto(`${app.url}#/dead-letters?store=billing&error=declined%20order%20order-bulk`);
    for (const id of ids) await page.getByRole('link', { name: id }).waitFor();
    await page
      .getByRole('group', { name: 'Bulk actions' })
      .getByRole('button', { name: 'Ignore all matching…' })
      .click();
    const dialog = page.getByRole('dialog', { name: 'Ignore all matching…' });
    await dialog.getByText('Ignores every dead letter in store billing matching').waitFor();
    await dialog.getByLabel('Reason (required)').fill('cancelled orders');
    const created = page.waitForRequest(
      (r) => r.method() === 'POST' && new URL(r.url()).pathname.endsWith('/api/jobs'),
    );
    await dialog.getByRole('button', { name: 'Ignore all matching…' }).click();
    expect(new URL((await created).url()).searchParams.get('store')).toBe('billing');
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs' }).click();
    await page.waitForURL(/#\/jobs\?store=billing/);
    const job = page
      .getByRole('table', { name: /in store billing/ })
      .getByRole('row')
      .filter({ hasText: 'dlq.ignore' });
    await job.getByText('done', { exact: true }).waitFor({ timeout: 20_000 });
    await expect(job.getByRole('progressbar').getAttribute('value')).resolves.toBe('2');
    for (const id of ids) expect((await app.billing.deadLetters.getDeadLetter(id, app.group))?.status).toBe('ignored');
    // Jobs live in the store they act on.
    await page.getByLabel('Store', { exact: true }).selectOption('orders');
    await page.getByText('No bulk jobs yet.').waitFor();
  });

  it('shows the overview summed over both stores, with a row per store', async () => {
    const { app, page } = s;
    app.failing.add('order-overview');
    const messageId = await app.order('order-overview');
    await app.deadLetter(messageId, 'dead');
    await page.goto(`${app.url}#/overview`);
    const perStore = page.getByRole('table', { name: 'Per store' });
    const orders = perStore.getByRole('row').filter({ hasText: 'orders' });
    const billing = perStore.getByRole('row').filter({ hasText: 'billing' });
    await billing.getByRole('link', { name: /^[1-9]\d* dead in billing$/ }).waitFor();
    await orders.getByRole('link', { name: '0 dead in orders' }).waitFor();
    const consumers = page.getByRole('region', { name: 'Consumers (dead letters)' });
    await consumers.getByRole('group', { name: /^[1-9]\d* dead$/ }).waitFor();
    await page
      .getByRole('table', { name: /Open dead letters/ })
      .getByRole('row')
      .filter({ hasText: 'payment provider declined order order-overview' })
      .getByRole('cell', { name: 'billing', exact: true })
      .first()
      .waitFor();

    // From the per-store row to that store's list.
    await billing.getByRole('link', { name: /dead in billing$/ }).click();
    await page.waitForURL(/#\/dead-letters\?store=billing&status=dead/);
    await page.getByRole('link', { name: messageId }).waitFor();
    await expect(page.getByLabel('Store', { exact: true }).inputValue()).resolves.toBe('billing');
  });
});
