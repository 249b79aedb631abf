import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';

/** Debian's Chromium; SURETY_CHROMIUM points elsewhere. */
export const chromiumPath = process.env.SURETY_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Why the browser tests cannot run here, or undefined when they can. Under CI a missing Chromium is a failure,
 * never a skip: the console would ship untested.
 */
export function browserSkipReason(): string | undefined {
  if (existsSync(chromiumPath)) return undefined;
  const message = `Chromium not found at ${chromiumPath}: install it with \`apt-get install chromium\` (or set SURETY_CHROMIUM)`;
  if (/^(1|true|yes)$/i.test(process.env.CI ?? ''))
    throw new Error(`${message}; CI is set, so the browser tests must run`);
  return message;
}

export interface BrowserSession {
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile of its own (its own cookie jar), so each role signs in separately.
 * Page errors and failed console assertions are collected in `errors`, for tests to check the page stayed clean.
 */
export async function openBrowser(): Promise<BrowserSession & { readonly errors: string[] }> {
  const profile = mkdtempSync(join(tmpdir(), 'surety-chromium-'));
  const errors: string[] = [];
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: ARGS,
      timeout: 60_000,
    });
    context.setDefaultTimeout(15_000);
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
    page.on('console', (msg) => {
      // A Content-Security-Policy violation is reported on the console: the console must not cause any.
      if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) errors.push(msg.text());
    });
    return {
      context,
      page,
      errors,
      async close() {
        await context.close().catch(() => undefined);
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}

/** Opens the console at `baseUrl` and signs in with `token`. */
export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(baseUrl);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** What a browser suite drives: the console at `url`, whose operator signs in with `operatorToken`. */
export interface ConsoleUnderTest {
  readonly url: string;
  readonly operatorToken: string;
  close(): Promise<void>;
}

/** The running app and the operator's page, for the tests of a {@link describeInBrowser} suite. */
export interface BrowserSuite<A> {
  readonly app: A;
  readonly page: Page;
}

let skipReason: { readonly reason: string | undefined } | undefined;

/**
 * `describe` for a suite in headless Chromium: skipped, saying why, where Chromium is missing. Before the suite it
 * starts the app and a browser signed in as its operator, and closes both after; after each test it checks that no
 * page raised a script error or a CSP violation.
 * @example
 * describeInBrowser('console on SQLite', () => startConsoleApp('sqlite'), (s) => {
 *   it('opens the overview', async () => {
 *     await s.page.goto(s.app.url);
 *   });
 * });
 */
export function describeInBrowser<A extends ConsoleUnderTest>(
  name: string,
  start: () => Promise<A>,
  body: (suite: BrowserSuite<A>) => void,
): void {
  skipReason ??= { reason: browserSkipReason() };
  const skip = skipReason.reason;
  if (skip) {
    console.warn(`browser tests skipped: ${skip}`);
    describe.skip(`${name} (skipped: ${skip})`, () => body({} as BrowserSuite<A>));
    return;
  }
  describe(name, () => {
    let app: A | undefined;
    let browser: Awaited<ReturnType<typeof openBrowser>> | undefined;
    beforeAll(async () => {
      app = await start();
      browser = await openBrowser();
      await signIn(browser.page, app.url, app.operatorToken);
    });
    afterAll(async () => {
      await browser?.close();
      await app?.close();
    });
    afterEach(() => {
      expect(browser?.errors).toEqual([]);
    });
    body({
      get app() {
        if (!app) throw new Error('the app has not started');
        return app;
      },
      get page() {
        if (!browser) throw new Error('the browser has not started');
        return browser.page;
      },
    });
  });
}
