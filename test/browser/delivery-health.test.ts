// The console's view of issue 31 in a real Chromium against a sandbox daemon with the send governor on: a session's
// health and decryption counters, its send queue (waiting sends listed next first, one cancelled from the page), and a
// message WhatsApp refused shown with its reason, in the session's recent messages and in its conversation, live.
// axe-core (no serious or critical violation) and screenshots at 1280 and 360 px.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { axeViolations, launchChromium, screenshotsAtTwoWidths, signedInConsole } from '../helpers/browser.js';
import { pairedSession, ROOT, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

const WAIT = { timeout: 30_000 };
const SHOTS = join(ROOT, 'test-results', 'delivery-health');
const REFUSED_TO = '+15550800002';
const QUEUED_TO = '+15550800003';
const REASON = 'WhatsApp refused it: the account may not start new chats for now (463)';

let daemon: TestDaemon;
let browser: Browser;

before(async () => {
  // one send at once, then one a minute: the next sends wait in the queue
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_GOVERNOR_ENABLED: 'true' }, config: 'governor:\n  perMinute: 1\n  burst: 1\n  jitterPercent: 0\n' });
  browser = await launchChromium();
  await pairedSession(daemon, 'shop', '+15550800001');
});

after(async () => {
  await browser?.close();
  await daemon?.cleanup();
});

// the session page asks for client rules this session has none of (404, expected)
const signedIn = () => signedInConsole(browser, daemon.url, daemon.masterKey, ['/api/sessions/shop/client-rules']);

test("a session's health, its send queue and a refused message, in the console", async () => {
  const { page, problems } = await signedIn();
  const chat = `${REFUSED_TO.slice(1)}@s.whatsapp.net`;

  // a conversation open when WhatsApp refuses a message (463): the bubble says why, at once
  await page.evaluate((jid) => ((globalThis as any).location.hash = `#/chats/shop/${encodeURIComponent(jid)}`), chat);
  await page.getByText('No stored messages in this chat.').waitFor(WAIT);
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/shop/faults/nack', { code: '463', chatId: REFUSED_TO })).status, 200);
  const refused = await daemon.request('POST', '/api/sessions/shop/messages/send', { chatId: REFUSED_TO, type: 'text', text: 'refused at once' });
  assert.equal(refused.status, 422, JSON.stringify(refused.body));
  const refusedId = (refused.body.error.details as Array<{ path: string; message: string }>).find((d) => d.path === '/messageId')!.message;
  const bubble = page.locator(`li.bubble[data-message="${refusedId}"]`);
  await bubble.getByTestId('failure').filter({ hasText: REASON }).waitFor(WAIT);
  assert.equal(await bubble.getAttribute('data-status'), 'failed');

  // two more, the pace spent: they wait in the queue
  const queued: string[] = [];
  for (const text of ['first in line', 'second in line']) {
    const res = await daemon.request('POST', '/api/sessions/shop/messages/send', { chatId: QUEUED_TO, type: 'text', text }, undefined, { Prefer: 'respond-async' });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.data.status, 'queued');
    queued.push(res.body.data.queueId as string);
  }

  await page.evaluate(() => ((globalThis as any).location.hash = '#/sessions/shop'));
  await page.getByRole('heading', { name: /^Session shop/, level: 1 }).waitFor(WAIT);

  // health: watched, with the time of the last frame; the decryption counters, nothing failed
  await page.getByTestId('health').filter({ hasText: /^healthy/ }).waitFor(WAIT);
  assert.ok(await page.getByTestId('health').locator('time').getAttribute('datetime'));
  assert.match((await page.getByTestId('decryption').textContent()) ?? '', /Undecryptable0 \(none\)/);

  // the queue: both waiting sends, next first; one cancelled from the page leaves the other
  const rows = page.locator('tr[data-queue-entry]');
  await waitFor(async () => ((await rows.count()) === 2 ? true : undefined), 10_000, 'two queued sends listed');
  assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-queue-entry'))), queued);
  await page.locator(`tr[data-queue-entry="${queued[1]}"]`).getByRole('button', { name: /^Cancel the send/ }).click();
  await waitFor(async () => ((await rows.count()) === 1 ? true : undefined), 10_000, 'the cancelled send gone from the list');
  assert.equal(await rows.first().getAttribute('data-queue-entry'), queued[0]);
  const left = (await daemon.request('GET', '/api/sessions/shop/queue')).body.data as Array<{ id: string }>;
  assert.deepEqual(left.map((e) => e.id), [queued[0]]);

  // the refused message among the recent ones, with its reason in words
  await page.locator(`tr[data-message="${refusedId}"]`).getByTestId('failure').filter({ hasText: REASON }).waitFor(WAIT);
  await screenshotsAtTwoWidths(page, SHOTS, 'session');
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.deepEqual((await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical'), []);

  // the conversation again, loaded from the store: the failure is kept with the message
  await page.evaluate((jid) => ((globalThis as any).location.hash = `#/chats/shop/${encodeURIComponent(jid)}`), chat);
  await page.locator(`li.bubble[data-message="${refusedId}"]`).getByTestId('failure').filter({ hasText: REASON }).waitFor(WAIT);
  assert.deepEqual((await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical'), []);
  assert.deepEqual(problems, []);
});
