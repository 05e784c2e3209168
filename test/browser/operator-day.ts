// The operator's day in the console at 1280 and 390 px (run by operator-day-wide.test.ts and operator-day-narrow.test.ts): a deep link that survives sign-in, a sandbox session paired with
// "Simulate scan", messages (chats as phone numbers, times with their zone), keys, webhooks and settings; axe-core finds
// no violation of any impact on any page, screenshots go to test-results/operator-day/, and at 390 px every table row is
// a card no wider than the screen with its buttons on it. In the middle the daemon stops: every open page shows
// "Daemon unreachable — retrying" and session statuses "unknown" (never "No sessions yet."), and once the daemon is back
// on the same port every page recovers by itself, without a reload. A key without webhooks:manage (no event stream)
// sees the QR and the pairing by polling, and once revoked lands on sign-in with the reason.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { axeViolations, launchChromium } from '../helpers/browser.js';
import { freePort, ROOT, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

const SHOTS = join(ROOT, 'test-results', 'operator-day');
const WAIT = { timeout: 30_000 };
const KEY_ITEM = 'gateway.console.key';
const TITLE = 'Session Gateway console';
const CONFIG = 'sessions:\n  qrRotationSeconds: 60\n  qrMaxRotations: 100\n';

let dataDir: string;
let port: number;
let daemon: TestDaemon;
let browser: Browser;

const startOnFixedPort = () => startDaemon({ port, dataDir, env: { GATEWAY_LOG_LEVEL: 'warn' }, config: CONFIG });

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-operator-day-'));
  port = await freePort();
  daemon = await startOnFixedPort();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await daemon?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Page errors and console errors other than the browser's own note of a failed or refused request: none allowed. */
function watch(page: Page, problems: string[]): void {
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    if (/^Failed to load resource/.test(message.text())) return;
    problems.push(`console ${message.type()}: ${message.text()}`);
  });
}

async function newContext(width: number, key?: string): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width, height: width > 600 ? 900 : 844 }, locale: 'en-US', timezoneId: 'UTC' });
  // no request leaves loopback
  await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
  if (key) await context.addInitScript(([item, value]) => (globalThis as any).sessionStorage.setItem(item, value), [KEY_ITEM, key]);
  return context;
}

/** axe-core finds nothing (any impact); a screenshot; at phone width nothing is wider than the screen. */
async function checkPage(page: Page, name: string, width: number): Promise<void> {
  assert.deepEqual((await axeViolations(page)).map((v) => v.line), [], `axe on ${name} at ${width} px`);
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
  if (width < 640) await assertFitsPhone(page, name, width);
}

/** No horizontal overflow; every table row (a card) and every button in it lies within the viewport. */
async function assertFitsPhone(page: Page, name: string, width: number): Promise<void> {
  const report = await page.evaluate(() => {
    const document = (globalThis as any).document;
    const root = document.documentElement;
    const rows = [...document.querySelectorAll('tbody tr')].map((row: any) => {
      const box = row.getBoundingClientRect();
      return { left: box.left, right: box.right, height: box.height, display: (globalThis as any).getComputedStyle(row).display };
    });
    const buttons = [...document.querySelectorAll('tbody button')].map((button: any) => {
      const box = button.getBoundingClientRect();
      return { text: button.textContent, left: box.left, right: box.right };
    });
    const labelled = [...document.querySelectorAll('tbody td')].filter((cell: any) => cell.colSpan === 1 && cell.hasAttribute('data-label')).length;
    return { overflow: root.scrollWidth - root.clientWidth, rows, buttons, labelled };
  });
  assert.ok(report.overflow <= 0, `${name} overflows a ${width} px screen by ${report.overflow} px`);
  for (const row of report.rows) {
    assert.ok(row.left >= 0 && row.right <= width, `${name}: a table row spans ${row.left}–${row.right} px on a ${width} px screen`);
    assert.equal(row.display, 'block', `${name}: a table row is a card at ${width} px`);
  }
  for (const button of report.buttons) assert.ok(button.left >= 0 && button.right <= width, `${name}: button "${button.text}" at ${button.left}–${button.right} px is off a ${width} px screen`);
  if (report.rows.length) assert.ok(report.labelled > 0, `${name}: the cards' cells carry their column labels`);
}

async function goTo(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  await page.evaluate((h) => ((globalThis as any).location.hash = h), hash);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor(WAIT);
}

/** After a navigation: the title names the page and the focus is on the page's content. */
async function assertNavigated(page: Page, title: string): Promise<void> {
  await waitFor(async () => (await page.title()) === `${title} · ${TITLE}`, 5000, `the title "${title} · ${TITLE}" (is "${await page.title()}")`);
  assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), 'main', `focus on the content of ${title}`);
}

const markDocument = (page: Page) => page.evaluate(() => ((globalThis as any).__sameDocument = true));
const sameDocument = (page: Page) => page.evaluate(() => (globalThis as any).__sameDocument === true);

async function operatorDay(width: number): Promise<void> {
  const name = `day${width}`;
  const problems: string[] = [];
  const context = await newContext(width);
  const page = await context.newPage();
  watch(page, problems);

  // a deep link opened before signing in is where the console lands after it
  await page.goto(`${daemon.url}/console#/sessions`);
  await page.getByLabel('Master key or API key', { exact: true }).waitFor(WAIT);
  assert.equal(await page.title(), `Sign in · ${TITLE}`);
  await checkPage(page, 'sign-in', width);
  await page.getByLabel('Master key or API key', { exact: true }).fill(daemon.masterKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor(WAIT);
  assert.match(page.url(), /#\/sessions$/);
  assert.equal(await page.title(), `Sessions · ${TITLE}`);
  await page.getByRole('status').filter({ hasText: /^live$/ }).waitFor(WAIT);
  await markDocument(page);

  // a sandbox session: the pairing card offers "Simulate scan", which pairs it
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Engine', { exact: true }).selectOption('sandbox');
  await page.getByRole('button', { name: 'Create session' }).click();
  await page.getByRole('heading', { name: `Session ${name}`, level: 1 }).waitFor(WAIT);
  await assertNavigated(page, `Session ${name}`);
  await page.getByRole('img', { name: /Pairing QR code/ }).waitFor(WAIT);
  await page.getByText('A sandbox session: no phone can scan this code').waitFor(WAIT);
  await checkPage(page, 'pairing', width);
  await page.getByLabel('Or link with a phone number', { exact: true }).fill(`+1555${width}0001`);
  await page.getByRole('button', { name: 'Simulate scan' }).click();
  await page.getByTestId('status').filter({ hasText: 'CONNECTED' }).waitFor(WAIT);
  assert.equal((await daemon.request('GET', `/api/sessions/${name}`)).body.data.phoneNumber, `+1555${width}0001`);

  // messages: a contact writes, the operator answers; the chat shows as a phone number, the time with its zone
  const inbound = await daemon.request('POST', `/api/sandbox/sessions/${name}/inbound`, { from: '+15557770001', type: 'text', text: 'hello operator' });
  assert.equal(inbound.status, 200);
  await page.locator(`tr[data-message="${inbound.body.data.messageId}"]`).waitFor(WAIT);
  await page.getByLabel('To', { exact: true }).fill('+15557770001');
  await page.getByLabel('Text', { exact: true }).fill('hello customer');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const sentId = (await page.getByTestId('sent-id').textContent(WAIT)) ?? '';
  const sentRow = page.locator(`tr[data-message="${sentId}"]`);
  await sentRow.waitFor(WAIT);
  const cells = await sentRow.locator('td').allTextContents();
  assert.match(cells[0]!, /\bUTC$/, `the time names its zone: ${cells[0]}`);
  assert.match(cells[1]!, /^(.+ \()?\+15557770001\)?$/, `the chat is a name or phone number, not a JID: ${cells[1]}`);
  assert.ok(!(await page.locator('tbody').first().textContent())!.includes('@s.whatsapp.net'));
  await checkPage(page, 'session', width);

  // keys, webhooks (one failing delivery, to show a Retry button in the log), settings, overview, sessions
  const key = await daemon.request('POST', '/api/admin/keys', { name: `reader ${width}`, scopes: ['sessions:read'], sessions: [name] });
  assert.equal(key.status, 201);
  const hook = await daemon.request('POST', '/api/webhooks', { url: 'http://127.0.0.1:9/refused', events: ['message.sent'], session: name, retries: { attempts: 0, delaySeconds: 1, policy: 'constant' } });
  assert.equal(hook.status, 201);
  await daemon.request('POST', '/api/messages/send', { session: name, chatId: '+15557770001', type: 'text', text: 'for the webhook' });
  await waitFor(async () => (await daemon.request('GET', `/api/webhooks/${hook.body.data.id}/deliveries?status=failed`)).body.data.length > 0, 30_000, 'the failed delivery');

  await goTo(page, '#/keys', 'API keys');
  await assertNavigated(page, 'API keys');
  await page.locator(`tr[data-key="${key.body.data.id}"]`).waitFor(WAIT);
  await checkPage(page, 'keys', width);
  await goTo(page, '#/webhooks', 'Webhooks');
  await assertNavigated(page, 'Webhooks');
  await page.locator(`tr[data-webhook="${hook.body.data.id}"]`).waitFor(WAIT);
  await checkPage(page, 'webhooks', width);
  await goTo(page, `#/webhooks/${hook.body.data.id}`, `Webhook ${hook.body.data.id}`);
  await page.locator('tr[data-status="failed"]').first().waitFor(WAIT);
  await page.getByRole('button', { name: 'Retry' }).first().waitFor(WAIT);
  await checkPage(page, 'webhook', width);
  await goTo(page, '#/settings', 'Settings');
  await assertNavigated(page, 'Settings');
  await checkPage(page, 'settings', width);
  await goTo(page, '#/', 'Overview');
  await assertNavigated(page, 'Overview');
  await checkPage(page, 'overview', width);
  await goTo(page, '#/sessions', 'Sessions');
  await page.locator(`tr[data-session="${name}"]`).waitFor(WAIT);
  await checkPage(page, 'sessions', width);
  assert.equal(await sameDocument(page), true, 'one document all day');

  // the daemon stops and returns: every page, open in its own tab, says so and recovers without a reload
  const wall: Array<{ hash: string; heading: string | RegExp; ready: (tab: Page) => Promise<unknown> }> = [
    { hash: '#/', heading: 'Overview', ready: (tab) => tab.getByTestId('version').waitFor(WAIT) },
    { hash: '#/sessions', heading: 'Sessions', ready: (tab) => tab.locator(`tr[data-session="${name}"] [data-status]:not([data-status="unknown"])`).waitFor(WAIT) },
    { hash: `#/sessions/${name}`, heading: `Session ${name}`, ready: (tab) => tab.locator(`tr[data-message="${sentId}"]`).waitFor(WAIT) },
    { hash: '#/keys', heading: 'API keys', ready: (tab) => tab.locator(`tr[data-key="${key.body.data.id}"]`).waitFor(WAIT) },
    { hash: '#/webhooks', heading: 'Webhooks', ready: (tab) => tab.locator(`tr[data-webhook="${hook.body.data.id}"]`).waitFor(WAIT) },
    { hash: `#/webhooks/${hook.body.data.id}`, heading: `Webhook ${hook.body.data.id}`, ready: (tab) => tab.locator('tr[data-status="failed"]').first().waitFor(WAIT) },
    { hash: '#/settings', heading: 'Settings', ready: (tab) => tab.getByRole('button', { name: 'Save S3 settings' }).waitFor(WAIT) },
  ];
  // a context (browser profile) each: a browser allows six connections to a host, and each tab holds one for its stream
  const wallContexts: BrowserContext[] = [];
  const tabs: Page[] = [];
  for (const view of wall) {
    const wallContext = await newContext(width, daemon.masterKey);
    wallContexts.push(wallContext);
    const tab = await wallContext.newPage();
    watch(tab, problems);
    await tab.goto(`${daemon.url}/console${view.hash}`);
    await tab.getByRole('heading', { name: view.heading, level: 1 }).waitFor(WAIT);
    await view.ready(tab);
    await tab.getByRole('status').filter({ hasText: /^live$/ }).waitFor(WAIT);
    await markDocument(tab);
    tabs.push(tab);
  }
  await goTo(page, `#/sessions/${name}`, `Session ${name}`);
  await page.getByTestId('status').filter({ hasText: 'CONNECTED' }).waitFor(WAIT);

  assert.equal(await daemon.stop(), 0);
  for (const tab of [page, ...tabs]) await tab.getByTestId('unreachable').filter({ hasText: 'Daemon unreachable — retrying' }).waitFor(WAIT);
  await page.getByTestId('status').filter({ hasText: 'unknown' }).waitFor(WAIT);
  await page.locator('h1 [data-status="unknown"]').waitFor(WAIT);
  const sessionsTab = tabs[1]!;
  await sessionsTab.locator(`tr[data-session="${name}"] [data-status="unknown"]`).waitFor(WAIT);
  await checkPage(page, 'daemon-down-session', width);
  // a page opened while the daemon is down: the list failed, so it does not claim there are no sessions
  await goTo(page, '#/sessions', 'Sessions');
  await page.getByRole('alert').filter({ hasText: 'NETWORK' }).waitFor(WAIT);
  assert.equal(await page.getByText('No sessions yet.').count(), 0);
  await checkPage(page, 'daemon-down-sessions', width);

  daemon = await startOnFixedPort();
  const status = (await daemon.request('GET', `/api/sessions/${name}`)).body.data.status as string;
  for (const [index, tab] of [page, ...tabs].entries()) {
    await tab.getByTestId('unreachable').waitFor({ state: 'detached', timeout: 30_000 });
    const view = index === 0 ? wall[1]! : wall[index - 1]!;
    await view.ready(tab);
    await waitFor(async () => (await tab.getByRole('alert').count()) === 0, 30_000, `no error left on ${view.hash}`);
    assert.equal(await sameDocument(tab), true, `${view.hash} recovered without a reload`);
  }
  await page.locator(`tr[data-session="${name}"] [data-status]`).filter({ hasText: /^(CONNECTED|CONNECTING|DISCONNECTED)/ }).waitFor(WAIT);
  await tabs[2]!.getByTestId('status').filter({ hasText: status === 'CONNECTED' ? 'CONNECTED' : /CONNECT|DISCONNECTED/ }).waitFor(WAIT);
  await tabs[2]!.getByRole('status').filter({ hasText: /^live$/ }).waitFor(WAIT);
  await checkPage(page, 'daemon-back-sessions', width);
  for (const wallContext of wallContexts) await wallContext.close();

  assert.deepEqual(problems, []);
  await context.close();
}

/**
 * The tests of one file: the operator's day at each width, and (`polling`) the key without an event stream. Two files
 * share them, so that neither runs past the test runner's limit for a file on a loaded machine.
 */
export function operatorDayTests({ widths, polling }: { widths: number[]; polling: boolean }): void {
  for (const width of widths) {
    test(`the operator's day at ${width} px, with a daemon restart in the middle`, async () => {
      await operatorDay(width);
    });
  }
  if (polling) test('a key without webhooks:manage pairs by polling, and a revoked key lands on sign-in with the reason', pairsByPolling);
}

async function pairsByPolling(): Promise<void> {
  const name = 'polled';
  assert.equal((await daemon.request('POST', '/api/sessions', { name, engine: 'sandbox', start: false })).status, 201);
  const created = await daemon.request('POST', '/api/admin/keys', { name: 'no stream', scopes: ['sessions:read', 'sessions:manage'], sessions: [name] });
  assert.equal(created.status, 201);
  const problems: string[] = [];
  const context = await newContext(390);
  const page = await context.newPage();
  watch(page, problems);
  await page.goto(`${daemon.url}/console#/sessions/${name}`);
  await page.getByLabel('Master key or API key', { exact: true }).fill(created.body.data.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: `Session ${name}`, level: 1 }).waitFor(WAIT);
  await page.getByRole('status').filter({ hasText: /^polling$/ }).waitFor(WAIT);
  await markDocument(page);

  // no event stream: the QR comes from the QR route once the session starts, and the pairing shows by polling
  await page.getByRole('button', { name: 'Start pairing' }).click();
  const qr = page.getByRole('img', { name: /Pairing QR code/ });
  await qr.waitFor(WAIT);
  assert.equal(await qr.getAttribute('data-qr'), (await daemon.request('GET', `/api/sessions/${name}/pairing/qr`)).body.data.qr);
  assert.equal(await page.getByRole('button', { name: 'Simulate scan' }).count(), 0, 'only the master key reaches the sandbox routes');
  await checkPage(page, 'polled-pairing', 390);
  assert.equal((await daemon.request('POST', `/api/sandbox/sessions/${name}/pair`, { phoneNumber: '+15558880001' })).status, 200);
  await page.getByTestId('status').filter({ hasText: 'CONNECTED' }).waitFor(WAIT);
  assert.equal(await sameDocument(page), true, 'no reload');

  // the key is revoked: the next poll's 401 signs out with the reason, and signing in again returns to the same page
  assert.equal((await daemon.request('DELETE', `/api/admin/keys/${created.body.data.id}`)).status, 200);
  await page.getByTestId('signed-out-reason').filter({ hasText: 'Your key was revoked or is invalid' }).waitFor(WAIT);
  assert.equal(await page.evaluate((item) => (globalThis as any).sessionStorage.getItem(item), KEY_ITEM), null);
  await checkPage(page, 'signed-out-revoked', 390);
  await page.getByLabel('Master key or API key', { exact: true }).fill(daemon.masterKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: `Session ${name}`, level: 1 }).waitFor(WAIT);
  assert.deepEqual(problems, []);
  await context.close();
}
