// The API reference page in a real Chromium: it renders the live document offline (every request stays on loopback),
// logs no console error (a CSP violation is one), and lists the send operation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
let browser: Browser;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await daemon?.cleanup();
});

test('GET /docs renders the live document offline, with no console error, and lists POST /api/sessions/{session}/messages/send', async () => {
  const context = await browser.newContext();
  const requests: string[] = [];
  const problems: string[] = [];
  // every request the page makes is recorded; one that would leave loopback is also stopped before it goes out
  await context.route('**/*', (route) => {
    const url = route.request().url();
    requests.push(url);
    return new URL(url).hostname === '127.0.0.1' ? route.continue() : route.abort();
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));

  // a deep link to the operation: swagger-ui renders a large document's later tags as they are scrolled to, and goes there
  const response = await page.goto(`${daemon.url}/docs#/Messages/sendMessage`, { waitUntil: 'load' });
  assert.equal(response?.status(), 200);
  const csp = response?.headers()['content-security-policy'] ?? '';
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /https?:|\*/, 'the policy names no other origin');

  const send = page.locator('.opblock-post .opblock-summary-path[data-path="/api/sessions/{session}/messages/send"]');
  await send.first().waitFor({ state: 'visible', timeout: 60_000 });
  assert.equal(await send.count(), 1);
  // the document the page rendered is the daemon's own
  assert.ok(requests.includes(`${daemon.url}/api/openapi.json`), `the page did not load the live document: ${requests.join(', ')}`);
  await page.waitForLoadState('networkidle');

  const offLoopback = requests.filter((url) => new URL(url).hostname !== '127.0.0.1');
  assert.deepEqual(offLoopback, [], 'every request stays on 127.0.0.1');
  assert.deepEqual(problems, []);
  await context.close();
});
