// The web console in a real Chromium against a sandbox daemon: an operator's day (sign in, create and pair a session,
// send, webhooks with a failing receiver and a retry, a key limited to one session), axe-core on every page, screenshots
// at 1280 and 360 px in test-results/console/, no console error, and no request leaving loopback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { axeViolations, launchChromium, screenshotsAtTwoWidths } from '../helpers/browser.js';
import { ROOT, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const SHOTS = join(ROOT, 'test-results', 'console');
const WAIT = { timeout: 30_000 };

let daemon: TestDaemon;
let receiver: Receiver;
let browser: Browser;

/** Everything that must stay empty: console errors, page errors, failed requests, requests off loopback, unexpected 4xx/5xx. */
interface Watch {
  problems: string[];
  offLoopback: string[];
  /** API answers >= 400 the test provokes on purpose ("GET /api/…/client-rules 404"); any other is a problem */
  expected: Set<string>;
}

async function consoleContext(): Promise<{ context: BrowserContext; page: Page; watch: Watch }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const watch: Watch = { problems: [], offLoopback: [], expected: new Set() };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).hostname !== '127.0.0.1') {
      watch.offLoopback.push(url);
      return route.abort();
    }
    return route.continue();
  });
  const page = await context.newPage();
  const answeredAsExpected = new Set<string>();
  page.on('response', (response) => {
    if (response.status() < 400) return;
    const id = `${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`;
    if (watch.expected.has(id)) answeredAsExpected.add(response.url());
    else watch.problems.push(`unexpected answer: ${id}`);
  });
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    // Chromium notes every 4xx fetch in the console; those the test provoked on purpose are accounted for above
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text()) && answeredAsExpected.has(message.location().url)) return;
    watch.problems.push(`console ${message.type()}: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => watch.problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // the event stream is aborted by the page itself on sign-out
    if (new URL(request.url()).pathname === '/api/events/stream' && request.failure()?.errorText === 'net::ERR_ABORTED') return;
    watch.problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  return { context, page, watch };
}

const pagesChecked: string[] = [];

/** axe-core on the page as shown (0 serious or critical violations), then screenshots at 1280 and 360 px. */
async function checkPage(page: Page, name: string): Promise<void> {
  const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious.map((v) => v.line), [], `axe on ${name}`);
  await screenshotsAtTwoWidths(page, SHOTS, name);
  pagesChecked.push(name);
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(`${daemon.url}/console`);
  await page.getByLabel('Master key or API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor(WAIT);
}

async function goTo(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  await page.evaluate((h) => ((globalThis as any).location.hash = h), hash);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor(WAIT);
}

/** Clicks Refresh until the delivery log shows a row matching `selector`. */
async function refreshUntil(page: Page, selector: string, what: string): Promise<void> {
  await waitFor(
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(200);
      return (await page.locator(selector).count()) > 0;
    },
    30_000,
    what,
  );
}

before(async () => {
  daemon = await startDaemon({
    env: { GATEWAY_LOG_LEVEL: 'warn' },
    // a QR that rotates every 4 s, so the test sees it redrawn
    config: 'sessions:\n  qrRotationSeconds: 4\n  qrMaxRotations: 100\n',
  });
  receiver = await startReceiver();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await receiver?.close();
  await daemon?.cleanup();
});

test("an operator's day in the console, every page accessible and screenshotted, nothing leaving loopback", async () => {
  const { context, page, watch } = await consoleContext();
  const response = await page.goto(`${daemon.url}/console`);
  assert.equal(response?.status(), 200);
  assert.match(response?.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
  await page.getByLabel('Master key or API key', { exact: true }).waitFor(WAIT);
  await checkPage(page, 'sign-in');

  // sign in with the master key: the key is in sessionStorage only, never in the URL or a cookie
  await page.getByLabel('Master key or API key', { exact: true }).fill(daemon.masterKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor(WAIT);
  await page.getByRole('status').filter({ hasText: /^live$/ }).waitFor(WAIT);
  assert.equal(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('gateway.console.key')), daemon.masterKey);
  assert.deepEqual(await context.cookies(), []);
  assert.ok(!page.url().includes(daemon.masterKey));
  await checkPage(page, 'overview');

  // create a session: the console opens its page, which shows the pairing QR
  // (a session without client rules: the rules card asks for them and is told 404 CLIENT_RULES_NOT_FOUND)
  watch.expected.add('GET /api/sessions/demo/client-rules 404');
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor(WAIT);
  await page.getByLabel('Name', { exact: true }).fill('demo');
  await page.getByLabel('Engine', { exact: true }).selectOption('sandbox');
  await page.getByRole('button', { name: 'Create session' }).click();
  await page.getByRole('heading', { name: /Session demo/, level: 1 }).waitFor(WAIT);
  const qr = page.getByRole('img', { name: /Pairing QR code/ });
  await qr.waitFor(WAIT);
  const firstQr = await qr.getAttribute('data-qr');
  assert.ok(firstQr && firstQr.length > 10, 'the QR carries the pairing payload');
  assert.equal(firstQr, (await daemon.request('GET', '/api/sessions/demo/pairing/qr')).body.data.qr);
  assert.match((await page.getByTestId('countdown').textContent()) ?? '', /^\d+$/);
  // the canvas was drawn on (not blank)
  const inked = await qr.evaluate((canvas: any) => {
    const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data as Uint8ClampedArray;
    let dark = 0;
    for (let i = 0; i < pixels.length; i += 4) if (pixels[i]! < 128) dark++;
    return dark;
  });
  assert.ok(inked > 1000, `the QR is drawn (${inked} dark pixels)`);
  // rotation redraws it (session.qr from the live stream, no reload)
  await page.evaluate(() => ((globalThis as any).__sameDocument = true));
  await page.waitForFunction((first) => (globalThis as any).document.querySelector('canvas.qr')?.getAttribute('data-qr') !== first, firstQr, WAIT);
  await checkPage(page, 'session-pairing');

  // the simulated phone scans it: the page turns connected by itself
  const paired = await daemon.request('POST', '/api/sandbox/sessions/demo/pair', { phoneNumber: '+15550400001' });
  assert.equal(paired.status, 200);
  await page.getByTestId('status').filter({ hasText: 'CONNECTED' }).waitFor(WAIT);
  // the health watchdog watches it from now on
  await page.getByTestId('health').filter({ hasText: 'healthy' }).waitFor(WAIT);
  assert.equal(await page.evaluate(() => (globalThis as any).__sameDocument), true, 'no reload');
  await page.getByText('+15550400001').first().waitFor(WAIT);

  // send a test message and see message.sent in the live events and the message in the store's list
  await page.getByLabel('To', { exact: true }).fill('+15550400002');
  await page.getByLabel('Text', { exact: true }).fill('hello from the console');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.getByTestId('sent-id').waitFor(WAIT);
  const sentId = await page.getByTestId('sent-id').textContent();
  await page.locator('li[data-event="message.sent"]').first().waitFor(WAIT);
  await page.locator(`tr[data-message="${sentId}"]`).waitFor(WAIT);
  assert.match((await page.locator(`tr[data-message="${sentId}"]`).textContent()) ?? '', /hello from the console/);

  // client rules and a test token
  await page.getByLabel('Recipients', { exact: true }).selectOption('any');
  await page.getByLabel('send_message', { exact: true }).check();
  await page.getByRole('button', { name: 'Save rules' }).click();
  await page.getByRole('button', { name: 'Mint a test token' }).click();
  const token = (await page.locator('.secret-value').first().textContent()) ?? '';
  assert.match(token, /^svc_ct_/);
  assert.equal((await daemon.request('GET', '/api/sessions/demo/client-rules')).body.data.allowedActions, 'send_message');
  await checkPage(page, 'session');

  // a webhook to a local receiver: its delivery shows in the log, signed with the key the console showed once
  await goTo(page, '#/webhooks', 'Webhooks');
  await page.getByLabel('URL', { exact: true }).fill(`${receiver.base}/hook`);
  await page.getByLabel('message.sent', { exact: true }).check();
  await page.getByLabel('Only this session', { exact: true }).fill('demo');
  await page.getByLabel('Attempts', { exact: true }).fill('0');
  await page.getByRole('button', { name: 'Create webhook' }).click();
  const hmacKey = (await page.locator('.secret-value').textContent({ timeout: 30_000 })) ?? '';
  assert.ok(hmacKey.length >= 16);
  await checkPage(page, 'webhooks');
  await page.locator('tr[data-webhook] a').first().click();
  await page.getByRole('heading', { name: /Webhook \d+/, level: 1 }).waitFor(WAIT);

  const send = async (text: string) => {
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'demo', chatId: '+15550400002', type: 'text', text });
    assert.equal(sent.status, 200);
    return sent.body.data.messageId as string;
  };
  await send('first webhook event');
  const [delivery] = await receiver.waitForCount(1, '/hook');
  const signature = createHmac('sha256', hmacKey).update(delivery!.raw).digest('hex');
  assert.equal(delivery!.headers['x-webhook-signature'], signature);
  await refreshUntil(page, 'tr[data-status="succeeded"]', 'the delivery shown as succeeded');

  // the receiver fails: the failed delivery shows with its last error and body; retried, it succeeds
  receiver.answer = () => 500;
  const failingId = await send('this one fails first');
  await receiver.waitForCount(2, '/hook');
  await refreshUntil(page, 'tr[data-status="failed"]', 'the failed delivery');
  await page.getByLabel('Status', { exact: true }).selectOption('failed');
  await page.locator('tr[data-status="failed"]').first().waitFor(WAIT);
  await page.getByRole('button', { name: 'Details' }).first().click();
  await page.getByTestId('last-error').filter({ hasText: /500/ }).waitFor(WAIT);
  assert.match((await page.getByLabel('Delivery body', { exact: true }).textContent()) ?? '', new RegExp(failingId));
  await checkPage(page, 'webhook');
  receiver.answer = () => 200;
  await page.getByRole('button', { name: 'Retry' }).first().click();
  await receiver.waitForCount(3, '/hook');
  await page.getByLabel('Status', { exact: true }).selectOption('succeeded');
  await refreshUntil(page, 'tr[data-status="succeeded"]', 'the retried delivery shown as succeeded');
  assert.equal(await page.locator('tr[data-delivery]').count(), 2, 'both deliveries succeeded');
  assert.equal(receiver.on('/hook').at(-1)!.json.payload.messageId, failingId);

  // an API key limited to one session, created in the console and shown once
  await daemon.request('POST', '/api/sessions', { name: 'other', engine: 'sandbox' });
  await goTo(page, '#/sessions', 'Sessions');
  await page.locator('tr[data-session="other"]').waitFor(WAIT);
  await checkPage(page, 'sessions');
  await goTo(page, '#/keys', 'API keys');
  await page.getByLabel('Name', { exact: true }).fill('demo only');
  for (const scope of ['sessions:read', 'sessions:manage', 'messages:send', 'webhooks:manage']) await page.getByLabel(scope, { exact: true }).check();
  await page.getByLabel('demo', { exact: true }).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByTestId('new-key').waitFor(WAIT);
  const limitedKey = (await page.locator('[data-testid="new-key"] .secret-value').textContent()) ?? '';
  assert.match(limitedKey, /^svc_/);
  await checkPage(page, 'keys');

  await goTo(page, '#/settings', 'Settings');
  await checkPage(page, 'settings');

  // sign out, sign in with the limited key: only its session, and nothing it may not use
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Master key or API key', { exact: true }).waitFor(WAIT);
  assert.equal(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('gateway.console.key')), null);
  await page.getByLabel('Master key or API key', { exact: true }).fill(limitedKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor(WAIT);
  const nav = page.getByRole('navigation', { name: 'Main' });
  assert.deepEqual(await nav.getByRole('link').allTextContents(), ['Overview', 'Sessions', 'Conversations', 'Webhooks']);
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.locator('tr[data-session="demo"]').waitFor(WAIT);
  assert.deepEqual(await page.locator('tr[data-session]').evaluateAll((rows) => rows.map((r: any) => r.getAttribute('data-session'))), ['demo']);
  await checkPage(page, 'sessions-limited-key');
  // a page the key may not use is not offered, and the API's 403 is shown plainly when reached anyway
  watch.expected.add('GET /api/sessions/other 403');
  await goTo(page, '#/sessions/other', /Session other/);
  await page.getByRole('alert').filter({ hasText: 'FORBIDDEN_SESSION' }).waitFor(WAIT);

  assert.deepEqual(watch.offLoopback, [], 'no request leaves loopback');
  assert.deepEqual(watch.problems, []);
  assert.deepEqual(pagesChecked, ['sign-in', 'overview', 'session-pairing', 'session', 'webhooks', 'webhook', 'sessions', 'keys', 'settings', 'sessions-limited-key']);
  await context.close();
});
