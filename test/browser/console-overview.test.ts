// The console's overview, keys and webhook pages in a real Chromium against a sandbox daemon with real traffic: the
// activity charts and the status report's findings, a constant number of requests however many webhooks, failed counts
// that open the delivery log on its failures; every scope offered for a new key; the webhook form's checklist of all
// event types, its signing scheme, and the signing key shown once (when created, when rotated) and signing deliveries.
// axe-core on each page: no violation at all.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, launchChromium, screenshotsAtTwoWidths } from '../helpers/browser.js';
import { pairedSession, ROOT, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { SCOPES } from '../../src/auth/scopes.js';
import { EVENT_TYPES } from '../../src/events/catalogue.js';

const WAIT = { timeout: 30_000 };
const SHOTS = join(ROOT, 'test-results', 'console-overview');

let daemon: TestDaemon;
let receiver: Receiver;
let browser: Browser;
/** the webhook whose receiver answers 500, without retries: each delivery fails for good at once */
let failingId: number;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  receiver = await startReceiver();
  receiver.answer = (delivery) => (delivery.path === '/fail' ? 500 : 200);
  browser = await launchChromium();
  await pairedSession(daemon, 'shop', '+15550800001');
  const failing = await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/fail`, events: ['message.received', 'message.sent'], retries: { attempts: 0 } });
  assert.equal(failing.status, 201);
  failingId = failing.body.data.id;
  for (const text of ['order 1', 'order 2', 'order 3']) await daemon.request('POST', '/api/sandbox/sessions/shop/inbound', { from: '+15550800002', type: 'text', text });
  await daemon.request('POST', '/api/messages/send', { session: 'shop', chatId: '+15550800002', type: 'text', text: 'thanks' });
  await receiver.waitForCount(4, '/fail');
  await waitFor(async () => (await daemon.request('GET', '/api/admin/activity')).body.data.totals.deliveriesFailed === 4, 15_000, 'the failures recorded');
});

after(async () => {
  await browser?.close();
  await receiver?.close();
  await daemon?.cleanup();
});

/** axe-core on the page as shown (no violation of any impact), then screenshots at 1280 and 360 px (no sideways scroll). */
async function axe(page: Page, name: string): Promise<void> {
  assert.deepEqual((await axeViolations(page)).map((v) => v.line), [], `axe on ${name}`);
  await screenshotsAtTwoWidths(page, SHOTS, name);
}

/** A page signed in with the master key; `api` collects the path of every API request it makes (the event stream aside). */
async function signedIn(key = daemon.masterKey): Promise<{ page: Page; api: string[]; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const api: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname;
    if (path.startsWith('/api/') && path !== '/api/events/stream') api.push(`${request.method()} ${path}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  await page.goto(`${daemon.url}/console`);
  await page.getByLabel('Master key or API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor(WAIT);
  return { page, api, problems, close: () => context.close() };
}

async function goTo(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  await page.evaluate((h) => ((globalThis as any).location.hash = h), hash);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor(WAIT);
}

/** The API requests of one load of the overview: reload, wait until charts, findings and failures show, then a quiet second. */
async function overviewLoad(page: Page, api: string[], webhooks: number): Promise<string[]> {
  api.length = 0;
  await page.reload();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor(WAIT);
  await page.locator('figure.chart svg[role="img"]').nth(3).waitFor(WAIT);
  await page.locator('[data-finding]').first().waitFor(WAIT);
  await waitFor(async () => (await page.locator('tr[data-webhook]').count()) === webhooks, 30_000, `${webhooks} webhooks listed`);
  await page.waitForTimeout(1000);
  return [...api].sort();
}

test('the overview charts the last hour, shows the findings, links failures to the log, in a constant number of requests', async () => {
  const { page, api, problems, close } = await signedIn();

  // four charts, each an image whose name says what it shows
  const charts = page.locator('figure.chart svg[role="img"]');
  await charts.nth(3).waitFor(WAIT);
  const names = await charts.evaluateAll((svgs) => svgs.map((svg: any) => svg.getAttribute('aria-label')));
  assert.equal(names.length, 4);
  // (at most 3 a minute, or fewer when the 3 fell on both sides of a minute)
  assert.match(names[0], /^Messages in: 3 in the last 60 minutes, at most [1-3] a minute \(\d/);
  assert.match(names[1], /^Messages out: 1 in the last 60 minutes/);
  assert.equal(names[2], 'Deliveries succeeded: none in the last 60 minutes');
  assert.match(names[3], /^Deliveries failed: 4 in the last 60 minutes/);
  assert.equal(await page.getByTestId('total-in').textContent(), '3');
  assert.equal(await page.getByTestId('total-off').textContent(), '4');
  // a bar is drawn in the current or the previous minute
  assert.ok((await page.locator('svg.bars.in rect').count()) >= 1);

  // the status report's findings: the failing webhook (linking to its failures) and the missing backup
  const failingFinding = page.locator(`li[data-finding="webhook-${failingId}"] a`);
  await failingFinding.waitFor(WAIT);
  assert.match((await failingFinding.textContent()) ?? '', new RegExp(`Webhook ${failingId} .*4 deliveries, last 500`));
  assert.equal(await failingFinding.getAttribute('href'), `#/webhooks/${failingId}/failed`);
  await page.locator('li[data-finding="backups"]').waitFor(WAIT);
  await page.locator(`tr[data-webhook="${failingId}"] a[data-failed="4"]`).waitFor(WAIT);
  await axe(page, 'overview');

  // the number of requests does not grow with the webhooks: 1 webhook, then 5
  const withOne = await overviewLoad(page, api, 1);
  assert.deepEqual(withOne, ['GET /api/account', 'GET /api/admin/activity', 'GET /api/admin/status', 'GET /api/health', 'GET /api/sessions']);
  for (let i = 0; i < 4; i++) assert.equal((await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/ok/${i}`, events: ['session.status'] })).status, 201);
  const withFive = await overviewLoad(page, api, 5);
  assert.deepEqual(withFive, withOne);
  assert.equal(await page.locator('a[data-failed]').count(), 1, 'only the failing webhook links to failures');
  assert.equal(await page.locator('span[data-failed="0"]').count(), 4);

  // the failed count opens the webhook's delivery log on its failed deliveries
  await page.locator(`tr[data-webhook="${failingId}"] a[data-failed]`).click();
  await page.getByRole('heading', { name: `Webhook ${failingId}`, level: 1 }).waitFor(WAIT);
  assert.equal(await page.getByLabel('Status', { exact: true }).inputValue(), 'failed');
  await waitFor(async () => (await page.locator('tr[data-delivery]').count()) === 4, 30_000, 'the 4 failed deliveries listed');
  assert.equal(await page.locator('tr[data-delivery][data-status="failed"]').count(), 4);
  assert.ok(api.some((path) => path === `GET /api/webhooks/${failingId}/deliveries`));

  assert.deepEqual(problems, []);
  await close();
});

test('a new key may be given any scope the daemon knows, audit:read included', async () => {
  const { page, problems, close } = await signedIn();
  await goTo(page, '#/keys', 'API keys');
  const offered = await page.locator('input[name="scope"]').evaluateAll((boxes) => boxes.map((box: any) => box.value));
  assert.deepEqual(offered, [...SCOPES]);
  await page.getByLabel('Name', { exact: true }).fill('auditor');
  await page.getByLabel('audit:read', { exact: true }).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByTestId('new-key').waitFor(WAIT);
  const key = (await page.locator('[data-testid="new-key"] .secret-value').textContent()) ?? '';
  const account = await daemon.request('GET', '/api/account', undefined, key);
  assert.deepEqual(account.body.data.scopes, ['audit:read']);
  assert.equal((await daemon.request('GET', '/api/admin/audit', undefined, key)).status, 200);
  await axe(page, 'keys');
  assert.deepEqual(problems, []);
  await close();
});

test('the webhook form: every event type as a checkbox, the signing scheme, and the signing key shown once when created and when rotated', async () => {
  const { page, problems, close } = await signedIn();
  await goTo(page, '#/webhooks', 'Webhooks');
  const boxes = page.locator('form input[type="checkbox"][name="event"]');
  assert.equal(await boxes.count(), EVENT_TYPES.length);
  assert.deepEqual(await boxes.evaluateAll((inputs) => inputs.map((input: any) => input.value)), [...EVENT_TYPES]);
  await axe(page, 'webhooks');

  await page.getByLabel('URL', { exact: true }).fill(`${receiver.base}/signed`);
  await page.getByLabel('message.sent', { exact: true }).check();
  await page.getByLabel('message.received', { exact: true }).check();
  await page.getByLabel('Signature covers', { exact: true }).selectOption('timestamp.body');
  await page.getByLabel('Attempts', { exact: true }).fill('0');
  await page.getByRole('button', { name: 'Create webhook' }).click();
  await page.getByTestId('new-webhook').waitFor(WAIT);
  const hmacKey = (await page.locator('[data-testid="new-webhook"] .secret-value').textContent()) ?? '';
  assert.match(hmacKey, /^[0-9a-f]{64}$/);
  await axe(page, 'webhooks-created');

  // stored as chosen (catalogue order), and the key is in no GET answer
  const id = (await daemon.request('GET', '/api/webhooks')).body.data.find((w: { url: string }) => w.url === `${receiver.base}/signed`).id as number;
  const stored = await daemon.request('GET', `/api/webhooks/${id}`);
  assert.deepEqual(stored.body.data.events, ['message.received', 'message.sent']);
  assert.equal(stored.body.data.signatureScheme, 'timestamp.body');
  assert.equal(stored.body.data.hmacKey, undefined);

  // the key the console showed signs `${timestamp}.${body}`
  const verify = async (key: string, text: string, count: number) => {
    await daemon.request('POST', '/api/messages/send', { session: 'shop', chatId: '+15550800003', type: 'text', text });
    const delivery = (await receiver.waitForCount(count, '/signed')).at(-1)!;
    const timestamp = String(delivery.headers['x-webhook-timestamp']);
    assert.equal(delivery.headers['x-webhook-signature'], createHmac('sha256', key).update(`${timestamp}.`).update(delivery.raw).digest('hex'));
  };
  await verify(hmacKey, 'signed with the first key', 1);

  // the edit form shows what is stored; rotating shows the new key once, and the next delivery is signed with it
  await goTo(page, `#/webhooks/${id}`, `Webhook ${id}`);
  assert.equal(await page.getByLabel('message.sent', { exact: true }).isChecked(), true);
  assert.equal(await page.getByLabel('chat.read', { exact: true }).isChecked(), false);
  assert.equal(await page.getByLabel('Signature covers', { exact: true }).inputValue(), 'timestamp.body');
  await page.getByRole('button', { name: 'Rotate signing key' }).click();
  await page.getByRole('button', { name: 'Yes, rotate signing key' }).click();
  await page.getByTestId('rotated-key').waitFor(WAIT);
  const rotated = (await page.locator('[data-testid="rotated-key"] .secret-value').textContent()) ?? '';
  assert.match(rotated, /^[0-9a-f]{64}$/);
  assert.notEqual(rotated, hmacKey);
  await axe(page, 'webhook');
  await verify(rotated, 'signed with the rotated key', 2);

  // unticking every event subscribes to all of them
  await page.getByRole('button', { name: 'Clear (every event)' }).click();
  await page.getByRole('button', { name: 'Save webhook' }).click();
  await waitFor(async () => (await daemon.request('GET', `/api/webhooks/${id}`)).body.data.events.length === 0, 10_000, 'events cleared');
  assert.deepEqual(problems, []);
  await close();
});

test('an API key sees the overview without the master-only parts, and asks for none of them', async () => {
  const key = (await daemon.request('POST', '/api/admin/keys', { name: 'webhook admin', scopes: ['sessions:read', 'webhooks:manage'] })).body.data.key;
  const { page, api, problems, close } = await signedIn(key);
  await page.getByText('need the master key').waitFor(WAIT);
  await page.locator('dd[data-state="CONNECTED"]').waitFor(WAIT);
  await page.waitForTimeout(1000);
  assert.equal(await page.locator('figure.chart').count(), 0);
  assert.deepEqual([...new Set(api)].sort(), ['GET /api/account', 'GET /api/health', 'GET /api/sessions']);
  await axe(page, 'overview-api-key');
  assert.deepEqual(problems, []);
  await close();
});
