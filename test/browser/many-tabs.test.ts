// Nine console tabs of one browser, signed in with the same key: they share one event stream (a browser gives a host six
// HTTP/1.1 connections, so a stream per tab left the seventh tab's requests waiting for ever). Every tab loads, shows
// "live" and hears the events; when the tab reading the stream closes, another takes it over.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const WAIT = { timeout: 30_000 };
const TABS = 9;

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

async function addAndPair(name: string): Promise<void> {
  assert.equal((await daemon.request('POST', '/api/sessions', { name, engine: 'sandbox', start: true })).status, 201);
  assert.equal((await daemon.request('POST', `/api/sandbox/sessions/${name}/pair`, {})).status, 200);
}

const sees = (page: Page, name: string) => page.getByRole('link', { name, exact: true }).first().waitFor(WAIT);

test(`${TABS} tabs with one key share one event stream and each hears every event`, async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
  await context.addInitScript((key) => (globalThis as any).sessionStorage.setItem('gateway.console.key', key), daemon.masterKey);
  let streams = 0;
  context.on('request', (request) => void (new URL(request.url()).pathname === '/api/events/stream' && streams++));

  const tabs: Page[] = [];
  for (let i = 0; i < TABS; i++) {
    const tab = await context.newPage();
    await tab.goto(`${daemon.url}/console#/sessions`);
    tabs.push(tab);
  }
  for (const tab of tabs) {
    await tab.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor(WAIT);
    await tab.getByRole('status').filter({ hasText: /^live$/ }).waitFor(WAIT);
  }
  assert.equal(streams, 1, 'one stream for all the tabs');

  await addAndPair('first');
  for (const tab of tabs) await sees(tab, 'first');

  // the tab reading the stream goes: another takes over, and the rest still hear events
  // (what happens while no tab holds the stream is loaded again once one does)
  const reopened = context.waitForEvent('response', { predicate: (r) => new URL(r.url()).pathname === '/api/events/stream', ...WAIT });
  await tabs.shift()!.close();
  await addAndPair('second');
  for (const tab of tabs) await sees(tab, 'second');
  await reopened;
  await addAndPair('third');
  for (const tab of tabs) await sees(tab, 'third');
  assert.equal(streams, 2, 'the stream reopened once, by one tab');
  await context.close();
});
