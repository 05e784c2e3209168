// The Baileys send path never lets Baileys fetch a link preview itself: that fetch (link-preview-js, when installed)
// goes to any URL in the text with no URL policy. The socket below hands what the messenger passes to Baileys' real
// generateWAMessage, merged the way Baileys' sendMessage merges it (its own getUrlInfo first, the caller's options
// last), with a getUrlInfo that records every URL it is asked to fetch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateWAMessage, type AnyMessageContent, type MiscMessageGenerationOptions, type WAMessage } from '@whiskeysockets/baileys';
import pino from 'pino';
import { messengerOver } from '../helpers/baileys-messenger.js';

const ME = '15550930001@s.whatsapp.net';
const PEER = '15550930002@s.whatsapp.net';
/** an internal name (Baileys' URL pattern skips IP literals, but not these) */
const INTERNAL_URL = 'https://metadata.google.internal/computeMetadata/v1/';

function harness() {
  const fetched: string[] = [];
  const sent: AnyMessageContent[] = [];
  const logger = pino({ level: 'silent' });
  const sock = {
    user: { id: ME },
    async sendMessage(jid: string, content: AnyMessageContent, options: MiscMessageGenerationOptions = {}): Promise<WAMessage> {
      sent.push(content);
      return generateWAMessage(jid, content, {
        logger,
        userJid: ME,
        getUrlInfo: async (url: string) => {
          fetched.push(url);
          return { 'canonical-url': url, 'matched-text': url, title: 'fetched' };
        },
        upload: () => Promise.reject(new Error('no upload in this test')),
        ...options,
      } as Parameters<typeof generateWAMessage>[2]);
    },
  };
  return { messenger: messengerOver('preview', sock, logger), fetched, sent, sock };
}

test('the harness is real: Baileys fetches a preview for a text whose linkPreview is undefined', async () => {
  const { sock, fetched } = harness();
  const message = await sock.sendMessage(PEER, { text: `look ${INTERNAL_URL}` });
  assert.deepEqual(fetched, [INTERNAL_URL]);
  assert.equal(message.message?.extendedTextMessage?.title, 'fetched');
});

test('a text without a gateway preview makes Baileys fetch nothing, and carries no preview', async () => {
  const { messenger, fetched, sent } = harness();
  const result = await messenger.sendMessage(PEER, { type: 'text', text: `look ${INTERNAL_URL}` }, {});
  assert.ok(result.messageId);
  assert.deepEqual(fetched, []);
  assert.equal((sent[0] as { linkPreview?: unknown }).linkPreview, null);
  const raw = result.raw as { message?: { extendedTextMessage?: { title?: string; matchedText?: string } } } | undefined;
  assert.equal(raw?.message?.extendedTextMessage?.title ?? undefined, undefined);
});

test('a text with the gateway preview carries it as built, and Baileys fetches nothing', async () => {
  const { messenger, fetched } = harness();
  const thumbnail = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
  const preview = { url: 'https://example.com/a', title: 'A page', description: 'about it', thumbnail };
  const result = await messenger.sendMessage(PEER, { type: 'text', text: 'see https://example.com/a', preview }, {});
  assert.deepEqual(fetched, []);
  const text = (result.raw as { message: { extendedTextMessage: { title: string; description: string; matchedText: string; jpegThumbnail: string } } }).message.extendedTextMessage;
  assert.equal(text.title, 'A page');
  assert.equal(text.description, 'about it');
  assert.equal(text.matchedText, 'https://example.com/a');
  assert.equal(Buffer.from(text.jpegThumbnail, 'base64').toString('hex'), thumbnail.toString('hex'));
});

test('an edit whose new text holds a URL makes Baileys fetch nothing', async () => {
  const { messenger, fetched } = harness();
  await messenger.editMessage({ id: 'ABCDEF0123456789', chatId: PEER, fromMe: true }, `now see ${INTERNAL_URL}`);
  assert.deepEqual(fetched, []);
});

test('a quoted reply without linkPreview makes Baileys fetch nothing either', async () => {
  const { messenger, fetched } = harness();
  await messenger.sendMessage(PEER, { type: 'text', text: `re ${INTERNAL_URL}` }, { quoted: { id: 'QUOTED0001', chatId: PEER, fromMe: false, type: 'text', text: INTERNAL_URL } });
  assert.deepEqual(fetched, []);
});
