// Launches Debian's Chromium (/usr/bin/chromium) through playwright-core for the browser tests: nothing is downloaded,
// and Chromium's own background traffic (updates, sync, QUIC) is off so every request a test sees comes from the page.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** What axe-core finds on the page as shown, one `id (impact): targets` line a violation. */
export async function axeViolations(page: Page): Promise<Array<{ impact: string; line: string }>> {
  if (!(await page.evaluate(() => Boolean((globalThis as any).axe)))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ impact: v.impact, line: `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}` }));
  });
}

/** Screenshots into `dir` at 1280 and 360 px, the page no wider than the 360 px screen; the viewport is 1280 px again after. */
export async function screenshotsAtTwoWidths(page: Page, dir: string, name: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize({ width: 360, height: 740 });
  const overflow = await page.evaluate(() => {
    const root = (globalThis as any).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
  assert.ok(overflow <= 0, `${name} is ${overflow} px wider than a 360 px screen`);
  await page.screenshot({ path: join(dir, `${name}-360.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}

/**
 * A page of a new 1280 × 900 context signed in to the console at `url` with `key`, its event stream live. `problems`
 * collects page errors, console errors and answers of 400 or more, but for a 404 of a path in `expected404` (a page that
 * asks for what may not exist).
 */
export async function signedInConsole(browser: Browser, url: string, key: string, expected404: string[] = []): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 404/.test(message.text())) problems.push(`console error: ${message.text()}`);
  });
  page.on('response', (response) => {
    const path = new URL(response.url()).pathname;
    if (response.status() >= 400 && !(response.status() === 404 && expected404.includes(path))) problems.push(`answer ${response.status()}: ${response.request().method()} ${path}`);
  });
  await page.goto(`${url}/console`);
  await page.getByLabel('Master key or API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const wait = { timeout: 30_000 };
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor(wait);
  await page.getByRole('status').filter({ hasText: /^live$/ }).waitFor(wait);
  return { page, problems };
}
