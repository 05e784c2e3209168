// The console's conversations page in a real Chromium against a sandbox daemon: session "shop" and a contact that is a
// second sandbox session ("alice", on the same simulated network) exchanging messages, plus a virtual contact with a
// long history. The chat list, a chat's history with the image the contact sent (fetched with the key, shown through an
// object URL), older pages as the history scrolls up, search opening its chat at the message, the composer's message
// reaching the contact (read back through the contact's own API), a message arriving live without a reload, and a
// message made of HTML shown as text. axe-core (no serious or critical violation) and screenshots at 1280 and 360 px.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, launchChromium, screenshotsAtTwoWidths, signedInConsole } from '../helpers/browser.js';
import { pairedSession, ROOT, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

const WAIT = { timeout: 30_000 };
const SHOTS = join(ROOT, 'test-results', 'conversations');
const SHOP = '15550700001@s.whatsapp.net';
const ALICE = '15550700002@s.whatsapp.net';
const FILLER = '15550700003@s.whatsapp.net';
const HTML_TEXT = '<img src=x onerror="globalThis.__pwned=1"><b>not bold</b> & <script>globalThis.__pwned=2</script>';
const FILLERS = 45;

let daemon: TestDaemon;
let browser: Browser;
let imageId: string;
let htmlId: string;

/** A width × height PNG of one colour (RGB), so the page's picture can be told from any other. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, Buffer.from([200, 40, 40]))]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

async function aliceSends(body: Record<string, unknown>): Promise<string> {
  const sent = await daemon.request('POST', '/api/sessions/alice/messages/send', { chatId: '+15550700001', ...body });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  return sent.body.data.messageId as string;
}

/** Waits until shop has stored the message (received from the network). */
async function shopHas(messageId: string): Promise<void> {
  await waitFor(async () => (await daemon.request('GET', `/api/sessions/shop/messages/${messageId}`)).status === 200, 10_000, `shop stores ${messageId}`);
}

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  browser = await launchChromium();
  await pairedSession(daemon, 'shop', '+15550700001');
  await pairedSession(daemon, 'alice', '+15550700002');
  // a virtual contact with a long history: more than a page; one early message has a word no other has
  for (let i = 1; i <= FILLERS; i++) {
    const text = `filler ${String(i).padStart(2, '0')}${i === 3 ? ' pineapple' : ''}`;
    const inbound = await daemon.request('POST', '/api/sandbox/sessions/shop/inbound', { from: '+15550700003', type: 'text', text });
    assert.equal(inbound.status, 200);
    await new Promise((r) => setTimeout(r, 2)); // distinct times, in order
  }
  await shopHas((await daemon.request('GET', '/api/sessions/shop/messages?limit=1')).body.data[0].messageId);
  // the contact alice: a question, a picture with a caption, and a message made of HTML (the newest)
  await shopHas(await aliceSends({ type: 'text', text: 'hello shop, do you have apples?' }));
  imageId = await aliceSends({ type: 'image', base64: png(40, 30).toString('base64'), caption: 'the red ones, pictured' });
  await shopHas(imageId);
  htmlId = await aliceSends({ type: 'text', text: HTML_TEXT });
  await shopHas(htmlId);
  // search is indexed behind the store (SQLite): wait until it finds the early word
  await waitFor(async () => (await daemon.request('GET', '/api/sessions/shop/messages/search?q=pineapple')).body.data?.results?.length === 1, 15_000, 'search indexed');
});

after(async () => {
  await browser?.close();
  await daemon?.cleanup();
});

interface Watched {
  page: Page;
  problems: string[];
}

async function signedIn(key = daemon.masterKey): Promise<Watched> {
  // the session page asks for client rules this session has none of (404, expected)
  return signedInConsole(browser, daemon.url, key, ['/api/sessions/shop/client-rules']);
}

const bubble = (page: Page, messageId: string) => page.locator(`li.bubble[data-message="${messageId}"]`);
const bubbleWith = (page: Page, text: string) => page.locator('li.bubble', { hasText: text });

test('the conversations page: chats, history with its image, older pages, search, the composer, live messages, HTML as text', async () => {
  const { page, problems } = await signedIn();

  // from the nav: the sessions to choose from; from a session's page: a link to its conversations
  await page.getByRole('link', { name: 'Conversations', exact: true }).click();
  await page.getByRole('heading', { name: 'Conversations', level: 1 }).waitFor(WAIT);
  await page.locator('.session-picker a', { hasText: 'alice' }).waitFor(WAIT);
  await page.evaluate(() => ((globalThis as any).location.hash = '#/sessions/shop'));
  await page.getByTestId('conversations-link').click();
  await page.getByRole('heading', { name: /^Conversations\s+session shop$/, level: 1 }).waitFor(WAIT);
  assert.match(page.url(), /#\/chats\/shop$/);

  // the chat list: newest activity first, with name, preview (the HTML message, as text), time and unread count
  const chats = page.locator('ul[aria-label="Chats"] > li');
  await page.locator(`li[data-chat="${FILLER}"]`).waitFor(WAIT);
  assert.deepEqual(await chats.evaluateAll((items) => items.map((li) => li.getAttribute('data-chat'))), [ALICE, FILLER]);
  const aliceItem = page.locator(`li[data-chat="${ALICE}"]`);
  assert.equal(await aliceItem.locator('.preview').textContent(), HTML_TEXT);
  assert.equal(await aliceItem.locator('.preview b, .preview img, .preview script').count(), 0);
  assert.equal(await aliceItem.locator('.chat-name').textContent(), '+15550700002');
  assert.equal(await aliceItem.locator('.unread').getAttribute('data-unread'), '3');
  assert.equal(await page.locator(`li[data-chat="${FILLER}"] .unread`).getAttribute('data-unread'), String(FILLERS));
  assert.ok(await aliceItem.locator('time').getAttribute('datetime'));

  // the chat: its history, the picture shown (40 × 30, fetched with the key), the HTML message as text
  await page.evaluate(() => ((globalThis as any).__sameDocument = true));
  await aliceItem.locator('a').click();
  await page.getByRole('heading', { name: '+15550700002', level: 2 }).waitFor(WAIT);
  await bubbleWith(page, 'hello shop, do you have apples?').waitFor(WAIT);
  const picture = bubble(page, imageId).locator('img.media');
  await picture.waitFor(WAIT);
  await page.waitForFunction((id) => ((globalThis as any).document.querySelector(`li[data-message="${id}"] img.media`)?.naturalWidth ?? 0) > 0, imageId, WAIT);
  assert.deepEqual(await picture.evaluate((img: any) => [img.naturalWidth, img.naturalHeight, img.src.slice(0, 5)]), [40, 30, 'blob:']);
  assert.equal(await bubble(page, imageId).locator('.text').textContent(), 'the red ones, pictured');
  assert.equal(await bubble(page, htmlId).locator('.text').textContent(), HTML_TEXT);
  assert.equal(await bubble(page, htmlId).locator('b, img, script').count(), 0);
  assert.equal(await page.evaluate(() => (globalThis as any).__pwned), undefined);
  await checkPage(page, 'chat');

  // the composer: the message shows in the history and reaches the contact (read through alice's own API)
  await page.getByLabel('Message', { exact: true }).fill('yes, a crate of them <i>today</i>');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const mine = page.locator('li.bubble.mine', { hasText: 'yes, a crate of them <i>today</i>' });
  await mine.waitFor(WAIT);
  assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), '');
  const sentId = await mine.getAttribute('data-message');
  assert.ok(sentId);
  const reached = await waitFor(
    async () => (await daemon.request('GET', `/api/sessions/alice/chats/${SHOP}/messages`)).body.data.messages.find((m: any) => m.messageId === sentId),
    10_000,
    'alice receives the message',
  );
  assert.equal(reached.text, 'yes, a crate of them <i>today</i>');
  assert.equal(reached.fromMe, false);
  // the contact's delivery ack reaches the bubble live
  await page.locator(`li.bubble[data-message="${sentId}"][data-status="delivered"], li.bubble[data-message="${sentId}"][data-status="read"]`).waitFor(WAIT);
  assert.equal(await page.locator(`li.bubble[data-message="${sentId}"]`).count(), 1, 'shown once (the send answer and the event are one message)');

  // a message arriving live: in the history and on top of the list, no reload
  const liveId = await aliceSends({ type: 'text', text: 'see you at noon' });
  await bubble(page, liveId).waitFor(WAIT);
  assert.equal(await bubble(page, liveId).locator('.text').textContent(), 'see you at noon');
  await page.locator(`li[data-chat="${ALICE}"] .preview`, { hasText: 'see you at noon' }).waitFor(WAIT);
  const last = await page.locator('ol.bubbles > li').last().getAttribute('data-message');
  assert.equal(last, liveId, 'the newest message is last');
  assert.equal(await page.evaluate(() => (globalThis as any).__sameDocument), true, 'no reload');

  // the long chat: its newest page, then older ones as the history scrolls up, to its start
  await page.locator(`li[data-chat="${FILLER}"] a`).click();
  await page.getByRole('heading', { name: '+15550700003', level: 2 }).waitFor(WAIT);
  await bubbleWith(page, `filler ${FILLERS}`).waitFor(WAIT);
  assert.equal(await page.locator('ol.bubbles > li').count(), 30, 'one page');
  assert.equal(await bubbleWith(page, 'filler 01').count(), 0);
  await page.getByRole('button', { name: 'Older messages' }).waitFor(WAIT);
  await page.locator('.messages').evaluate((el: any) => el.scrollTo(0, 0));
  await bubbleWith(page, 'filler 01').waitFor(WAIT);
  await page.getByText('The start of the stored history').waitFor(WAIT);
  assert.equal(await page.locator('ol.bubbles > li').count(), FILLERS);
  const texts = await page.locator('ol.bubbles .text').allTextContents();
  assert.deepEqual(texts, Array.from({ length: FILLERS }, (_, i) => `filler ${String(i + 1).padStart(2, '0')}${i === 2 ? ' pineapple' : ''}`), 'oldest first, each once');
  assert.equal(await page.evaluate(() => (globalThis as any).__sameDocument), true, 'no reload');

  // search: a word of an early message; its result opens the chat at that message
  await page.locator(`li[data-chat="${ALICE}"] a`).click();
  await page.getByRole('heading', { name: '+15550700002', level: 2 }).waitFor(WAIT);
  await page.getByRole('searchbox', { name: 'Search messages' }).fill('pineapple');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const results = page.locator('ul[aria-label="Search results"] > li');
  await results.first().waitFor(WAIT);
  assert.equal(await results.count(), 1);
  assert.match((await results.first().textContent()) ?? '', /filler 03 pineapple/);
  assert.equal(await results.first().locator('mark').textContent(), 'pineapple');
  await results.first().locator('a').click();
  await page.getByRole('heading', { name: '+15550700003', level: 2 }).waitFor(WAIT);
  const hit = page.locator('li.bubble.focused');
  await hit.waitFor(WAIT);
  assert.equal(await hit.locator('.text').textContent(), 'filler 03 pineapple');
  assert.ok(await hit.isVisible());
  assert.match(decodeURIComponent(page.url()), new RegExp(`#/chats/shop/${FILLER}/`));
  await checkPage(page, 'search');
  // a caption is found too, and opens the chat with its picture
  await page.getByRole('searchbox', { name: 'Search messages' }).fill('pictured');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.locator(`ul[aria-label="Search results"] > li[data-result="${imageId}"] a`).click();
  await page.waitForFunction((id) => ((globalThis as any).document.querySelector(`li.bubble.focused[data-message="${id}"] img.media`)?.naturalWidth ?? 0) === 40, imageId, WAIT);
  await page.getByRole('button', { name: 'Back to chats' }).click();
  await page.locator(`li[data-chat="${ALICE}"]`).waitFor(WAIT);

  assert.deepEqual(problems, []);
});

test('a key without media:read or messages:send: the chats and history, a note for the picture, no composer', async () => {
  const created = await daemon.request('POST', '/api/admin/keys', { name: 'reader', scopes: ['sessions:read', 'webhooks:manage'], sessions: ['shop'] });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { page, problems } = await signedIn(created.body.data.key);
  await page.getByRole('link', { name: 'Conversations', exact: true }).click();
  await page.locator('.session-picker a', { hasText: 'shop' }).click();
  await page.locator(`li[data-chat="${ALICE}"] a`).click();
  await bubble(page, imageId).waitFor(WAIT);
  assert.match((await bubble(page, imageId).textContent()) ?? '', /showing it needs the media:read scope/);
  assert.equal(await bubble(page, imageId).locator('img').count(), 0);
  assert.equal(await page.getByLabel('Message', { exact: true }).count(), 0);
  await page.getByText('Sending needs the messages:send scope.').waitFor(WAIT);
  // the page never asked for what the key may not have
  assert.deepEqual(problems, []);
});

/** axe-core on the page as shown (no serious or critical violation), then screenshots at 1280 and 360 px. */
async function checkPage(page: Page, name: string): Promise<void> {
  const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious.map((v) => v.line), [], `axe on ${name}`);
  await screenshotsAtTwoWidths(page, SHOTS, name);
}
