// Chromium through playwright-core for the console's browser tests: one browser
// per test file, a context (its own cookies) per scenario, and helpers that wait
// for what a page shows, never for a time.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import type { AxeResults } from 'axe-core';
import type { Test } from 'tap';
import { build, type TestContext } from '../helper.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const AXE = fileURLToPath(import.meta.resolve('axe-core/axe.min.js'));
const SCREENSHOTS = join(HERE, 'screenshots');

/** Debian's chromium by default; CHROMIUM_PATH points at another. */
function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    // no sandbox: containers and CI runners lack the namespaces it needs; the rest keeps chromium off the network
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * The console listening on a free port of this process (a kernel built with
 * `opts`, as build(t, opts)), and a browser to drive it.
 * `scenario` runs in a browser context of its own (no cookies shared with the
 * others): `page` is its first tab; at the end no tab may have had a script
 * error, beyond the API refusals `provoked` lets through (Chromium logs each 4xx
 * answer of a fetch as an error).
 */
export async function consoleInBrowser(t: Test, opts: Parameters<typeof build>[1] = {}) {
  // launched before build(t): teardowns run in order, so the browser goes before the app closes
  const browser = await launch();
  t.teardown(() => browser.close());
  const ctx: TestContext = await build(t, opts);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const scenario = (name: string, fn: (t: Test, page: Page, errors: string[]) => Promise<void>, provoked: (error: string) => boolean = () => false) =>
    t.test(name, async (t) => {
      const context = await newContext(browser, base);
      t.teardown(() => context.close());
      const errors: string[] = [];
      context.on('page', (page) => watchErrors(page, errors));
      await fn(t, await context.newPage(), errors);
      t.same(
        errors.filter((e) => unexpected(e) && !provoked(e)),
        [],
        'no script or console error in any tab',
      );
    });
  return { ctx, scenario };
}

/**
 * A context on the console at `base`. axe-core is served from the console's own
 * origin (a route only this browser sees): the page's CSP allows same-origin
 * scripts only, and it stays on, so a page breaking it logs an error here.
 */
async function newContext(browser: Browser, base: string): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL: base });
  await context.route(`${base}/__test/axe.min.js`, (route) => route.fulfill({ path: AXE, contentType: 'text/javascript' }));
  return context;
}

/** Adds to `errors` what the page's scripts throw or log as errors from now on. */
function watchErrors(page: Page, errors: string[]): void {
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()} (${msg.location().url})`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
}

/** Chromium logs every page answered 4xx as an error; a test that asked for one expects it. Assets must load. */
const unexpected = (error: string) => !/^console: Failed to load resource: the server responded with a status of 4\d\d .*\(https?:\/\/[^/]+\/(?!console\/)[^)]*\)$/.test(error);

/**
 * Clicks a link or a form's button, then waits for the document it leads to
 * (after any redirect) to load; answers that document's HTTP status.
 */
export async function submit(page: Page, button: Locator): Promise<number> {
  const response = page.waitForResponse((r) => r.request().isNavigationRequest() && r.frame() === page.mainFrame() && (r.status() < 300 || r.status() >= 400));
  // the old document has loaded already: the next load event is the new one's
  const loaded = page.waitForEvent('load');
  await button.click();
  const [res] = await Promise.all([response, loaded]);
  return res.status();
}

export interface Login {
  tenant: string;
  email: string;
  password: string;
}

/** Fills in and sends the login form at /login; answers the status of the page it leads to. */
export async function logIn(page: Page, login: Login): Promise<number> {
  if (!new URL(page.url()).pathname.startsWith('/login')) await page.goto('/login');
  await page.getByLabel('Tenant').fill(login.tenant);
  await page.getByLabel('E-mail').fill(login.email);
  await page.getByLabel('Password').fill(login.password);
  return submit(page, page.getByRole('button', { name: 'Log in' }));
}

/** axe-core's serious and critical violations on the page, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  const base = new URL(page.url()).origin;
  await page.addScriptTag({ url: `${base}/__test/axe.min.js` });
  const results = await page.evaluate(() => (globalThis as unknown as { axe: { run(o: object): Promise<AxeResults> } }).axe.run({ resultTypes: ['violations'] }));
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

/** A full-page screenshot in test/browser/screenshots/, named after the page's path. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name.replace(/^\//, '').replace(/[^a-z0-9-]+/gi, '_') || 'home'}.png`), fullPage: true });
}
