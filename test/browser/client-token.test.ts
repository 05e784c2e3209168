import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';

let daemon: TestDaemon;
let events: EventCollector;
let browser: Browser;
const pages: Server[] = [];

/** Serves one HTML page whose script sends a message with the token it is given in the query string. */
async function pageServer(): Promise<string> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><title>client</title><script>
      async function sendWithToken(api, token, body) {
        try {
          const res = await fetch(api + '/api/messages/send', {
            method: 'POST',
            headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
            body: JSON.stringify(body),
          });
          return { ok: res.ok, status: res.status, json: await res.json() };
        } catch (err) {
          return { ok: false, error: String(err) };
        }
      }
    </script>`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  pages.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'shop', '+15550300001');
  await pairedSession(daemon, 'customer', '+15550300002');
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  events.close();
  await daemon.cleanup();
  for (const server of pages) await new Promise((done) => server.close(done));
});

test('a page on an allowed origin sends with a client token; a page on another origin fails on CORS', async () => {
  const allowed = await pageServer();
  const other = await pageServer();
  const rules = await daemon.request('PUT', '/api/sessions/shop/client-rules', { recipientMode: 'any', allowedActions: 'send_message', allowedOrigins: allowed });
  assert.equal(rules.status, 200);
  const token = (await daemon.request('POST', '/api/client-tokens', { session: 'shop', ephemeralId: 'browser-visitor', ttlSeconds: 300 })).body.data.token;
  const body = { session: 'shop', chatId: '+15550300002', type: 'text', text: 'hello from the browser' };

  const context = await browser.newContext();
  try {
    const good = await context.newPage();
    await good.goto(allowed);
    const result = await good.evaluate(([api, t, b]) => (globalThis as any).sendWithToken(api, t, b), [daemon.url, token, body] as const);
    assert.equal(result.ok, true, JSON.stringify(result));
    const messageId = result.json.data.messageId;
    const received = await events.next((e) => e.session === 'customer' && e.event === 'message.received' && e.payload.messageId === messageId, 5000, 'the customer receives the browser message');
    assert.equal(received.payload.text, 'hello from the browser');

    const bad = await context.newPage();
    await bad.goto(other);
    const refused = await bad.evaluate(([api, t, b]) => (globalThis as any).sendWithToken(api, t, { ...b, text: 'should not arrive' }), [daemon.url, token, body] as const);
    assert.equal(refused.ok, false);
    assert.match(refused.error ?? '', /Failed to fetch|TypeError/);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(events.all((e) => e.session === 'customer' && e.payload?.text === 'should not arrive').length, 0);
  } finally {
    await context.close();
  }
});
