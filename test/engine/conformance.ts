// The engine conformance suite: one set of scenarios, run through the real daemon's HTTP API against each engine
// (like Hono's router suite: runEngineSuite({ name, start })). Every scenario runs on every engine: none is skipped.
import assert from 'node:assert/strict';
import { openDaemonDb } from '../helpers/daemon-db.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Db } from '../../src/store/db.js';
import { Jimp } from 'jimp';
import { after, before, describe, it } from 'node:test';
import { waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector, type StreamedEvent } from '../helpers/events.js';
import { checkEventAsync } from '../helpers/event-contract.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import { mp4, ogg, pdf, png, VCARD, webp } from './samples.js';
import { LOGOUT_REASONS, type LogoutReason } from '../../src/engine/logouts.js';

/** What an engine's test setup provides: a running daemon, and the phone side of pairing. */
export interface EngineTarget {
  daemon: TestDaemon;
  /** the engine name sessions are created with */
  engine: 'baileys' | 'sandbox';
  /** the phone `phone` scans the QR the session shows */
  scanQr(session: string, qr: string, phone: string): Promise<void>;
  /** the user types the pairing code on the phone `phone` */
  enterCode(session: string, code: string, phone: string): Promise<void>;
  /** stops the daemon (SIGTERM) and starts it again on the same data dir and port */
  restartDaemon(): Promise<TestDaemon>;
  /** makes `phone` a contact on the network: an account with a phone and no gateway session */
  addContact(phone: string): Promise<void>;
  /**
   * The contact `phone` sends `text` to the account `accountPhone` of session `session`; with `senderLidOnly` the network
   * names the sender by LID only (a LID-addressed chat), so only the session's own knowledge gives its number.
   */
  contactSends(phone: string, session: string, accountPhone: string, text: string, options?: { senderLidOnly?: boolean }): Promise<void>;
  /** the phone of `phone` syncs a chat history holding one image (with `caption`) that a contact sent it */
  syncHistoryImage(session: string, phone: string, image: Buffer, caption: string): Promise<void>;
  /** stops everything it started and removes its files */
  close(): Promise<void>;
  /** the contact `phone` calls the account `accountPhone` of session `session`; resolves with the call's id once it is placed */
  contactCalls(phone: string, session: string, accountPhone: string, options?: { isVideo?: boolean }): Promise<string>;
  /** the call `callId` of `phone` to `session` stops ringing unanswered: it rings out (`timeout`) or the caller hangs up (`cancelled`) */
  callEnds(phone: string, session: string, callId: string, how: 'timeout' | 'cancelled'): Promise<void>;
  /** resolves once the caller `phone` saw the call `callId` rejected (the session's reject reached the caller); throws otherwise */
  callerSawReject(phone: string, session: string, callId: string): Promise<void>;
  /** resolves once the contact `phone` received the message `messageId` of `session` with the text `text`; throws otherwise */
  contactReceived(phone: string, session: string, messageId: string, text: string): Promise<void>;
  /**
   * The chat actions the network received from the account `phone`'s devices, oldest first (Baileys: the app-state
   * patches the emulator read with the account's key); undefined where the network is the daemon's own (the sandbox).
   */
  chatActionsReceived(phone: string): Promise<Array<{ action: string; chatId: string }> | undefined>;
  /**
   * The phone of `phone` (the account of session `session`) holds `messages` of its chat with the contact `contact`
   * from before what it synced (oldest first, the last a day ago): a history request gets them.
   */
  seedOlderMessages(session: string, phone: string, contact: string, messages: Array<{ text: string; fromMe?: boolean }>): Promise<void>;
  /**
   * The network answers the next message the account `phone` (session `session`) sends to `to` with `fault`: refused with
   * the ack error `code`, or never acked (nor delivered) until releaseWithheld.
   */
  failNextSend(session: string, phone: string, to: string, fault: { nack: string } | 'no-ack'): Promise<void>;
  /** the messages a no-ack fault held back are acked and delivered now (a late server ack) */
  releaseWithheld(session: string): Promise<void>;
  /**
   * The contact `phone` sends `text` to the account `accountPhone` of session `session` encrypted to a pre-key the
   * session's device no longer has: it cannot decrypt it and asks the contact again; the contact answers with a copy
   * that decrypts (`recovered`) or never answers. Resolves with the message id.
   */
  contactSendsUndecryptable(phone: string, session: string, accountPhone: string, text: string, recovered: boolean): Promise<string>;
  /** The contact `phone` cannot decrypt the next message session `session` sends it, and asks for it again `count` times. */
  contactAsksAgain(phone: string, session: string, count: number): Promise<void>;
  /** the network logs the session (the account `phone`) out for a classified reason, as the real server does */
  forceLogout(session: string, phone: string, reason: LogoutReason): Promise<void>;
  /**
   * The network stops sending the session (the account `phone`) anything while its connection stays open: until its
   * next connection (`reconnect`), or until it restarts (`restart`: the reconnect's connection is silent too).
   */
  silence(session: string, phone: string, until: 'reconnect' | 'restart'): Promise<void>;
}

/**
 * The send governor on, with a pace and caps that never hold a send back: the conformance suite's 'queued send' scenario
 * tightens one session's pace to queue a send, and every other scenario sends as freely as ungoverned.
 */
const GOVERNED_FREELY = {
  env: { GATEWAY_GOVERNOR_ENABLED: 'true' },
  config: 'governor:\n  perMinute: 1000000\n  burst: 1000000\n  recipientGapSeconds: 0\n  firstContactsPerDay: 100000\n  warmup: []\n',
};

/**
 * The conformance daemons: a short server-ack timeout, so that the timeout scenario takes seconds, and the send governor
 * on with a pace and caps that never hold a send back.
 */
export const CONFORMANCE_DAEMON = { env: GOVERNED_FREELY.env, config: `messages:\n  serverAckTimeoutMs: 4000\n${GOVERNED_FREELY.config}` };

export type Scenario =
  | 'pair by QR'
  | 'pair by code'
  | 'text both ways, quoted, with a webhook'
  | 'each message type'
  | 'acks'
  | 'a queued send goes out under the id chosen when it was queued'
  | 'edit, delete, react'
  | 'group with two members'
  | 'presence'
  | 'link previews'
  | 'status posts'
  | 'casting a poll vote'
  | 'restart and restore'
  | 'group and profile pictures'
  | 'identities survive a restart'
  | 'history media'
  | 'chat list, history and search'
  | 'calls'
  | 'identities'
  | 'chat actions'
  | 'backfill'
  | 'refused and unacked sends'
  | 'decryption failures and retries'
  | 'forced logouts'
  | 'logout';

export interface EngineSuiteOptions {
  name: string;
  start(): Promise<EngineTarget>;
}

const ALICE = '15550101001';
const BOB = '15550102002';
/** a contact with no session: known to alice by number and LID before a restart, writing by LID only after it */
const CAROL = '15550103003';
/** a contact with no session who calls alice */
const ERIN = '15550105005';
/** a contact with no session that first writes in the 'identities' scenario */
const DAVE = '15550104004';
/** a number with no account on the network */
const NOBODY = '99955501234';
/** a contact whose older messages only the phone holds (the backfill scenario) */
const FRANK = '15550106006';
/** a contact whose messages alice cannot decrypt at first, and who cannot decrypt alice's (decryption scenario) */
const GRACE = '15550107007';
/** the account of a session the network logs out, for each classified reason in turn */
const GINA = '15550108008';

/** How each forced logout leaves a session (docs/ENGINES.md, forced logouts): its status reason and lastError code. */
const LOGOUT_OUTCOMES: Record<LogoutReason, { statusReason: string; code: string }> = {
  unlinked: { statusReason: 'LOGGED_OUT', code: 'LOGGED_OUT' },
  replaced: { statusReason: 'FAILED', code: 'CONNECTION_REPLACED' },
  banned: { statusReason: 'FAILED', code: 'BANNED' },
  temporarily_banned: { statusReason: 'TEMPORARY_BAN', code: 'TEMPORARILY_BANNED' },
  locked: { statusReason: 'TEMPORARY_BAN', code: 'ACCOUNT_LOCKED' },
  key_error: { statusReason: 'FAILED', code: 'KEY_ERROR' },
};
const jid = (digits: string) => `${digits}@s.whatsapp.net`;

export function runEngineSuite(options: EngineSuiteOptions): void {
  describe(`engine conformance: ${options.name}`, () => {
    let target: EngineTarget;
    let daemon: TestDaemon;
    let events: EventCollector;
    let hook: WebhookReceiver;

    const scenario = (name: Scenario, fn: () => Promise<void>) => it(name, fn);
    const api = async (method: string, path: string, body?: unknown, expected = 200) => {
      const res = await daemon.request(method, path, body);
      assert.equal(res.status, expected, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body?.data;
    };
    const send = (session: string, chatId: string, fields: Record<string, unknown>) => api('POST', '/api/messages/send', { session, chatId, ...fields });
    const received = (session: string, match: (p: any) => boolean, what: string, timeoutMs = 10_000) =>
      events.next((e) => e.session === session && e.event === 'message.received' && match(e.payload), timeoutMs, what).then((e) => e.payload);
    const event = (session: string, type: string, match: (p: any) => boolean, what: string, timeoutMs = 10_000): Promise<StreamedEvent> =>
      events.next((e) => e.session === session && e.event === type && match(e.payload), timeoutMs, what);
    const status = async (session: string) => (await daemon.request('GET', `/api/sessions/${session}`)).body.data;
    const authStateRows = (session: string) => countAuthState(daemon.dataDir, session);
    const connected = (session: string) => waitFor(async () => (await status(session)).status === 'CONNECTED', 15_000, `${session} CONNECTED`);
    const download = async (session: string, mediaId: string): Promise<Buffer> => {
      const res = await fetch(`${daemon.url}/api/sessions/${session}/media/${mediaId}/download`, { method: 'POST', headers: { Authorization: `Bearer ${daemon.masterKey}` } });
      assert.equal(res.status, 200, `download ${mediaId}: ${res.status} ${await res.clone().text()}`);
      return Buffer.from(await res.arrayBuffer());
    };

    before(async () => {
      target = await options.start();
      daemon = target.daemon;
      events = await collectEvents(daemon);
      hook = await webhookReceiver();
    });

    after(async () => {
      events?.close();
      await hook?.close();
      await target?.close();
    });

    scenario('pair by QR', async () => {
      await api('POST', '/api/sessions', { name: 'alice', start: true, engine: target.engine }, 201);
      const qr = await waitFor(async () => {
        const res = await daemon.request('GET', '/api/sessions/alice/pairing/qr');
        return res.status === 200 ? (res.body.data as { qr: string; expiresAt: string }) : undefined;
      }, 10_000, 'a QR code');
      assert.ok(qr.qr.length > 10);
      assert.ok(Date.parse(qr.expiresAt) > Date.now());
      assert.equal((await status('alice')).statusReason, 'SCAN_QR');
      await target.scanQr('alice', qr.qr, ALICE);
      await connected('alice');
      const view = await status('alice');
      assert.equal(view.phoneNumber, `+${ALICE}`);
      assert.equal(view.statusReason, null);
      assert.match(view.lid ?? '', /@lid$/);
      const connectedEvent = await event('alice', 'session.connected', () => true, 'session.connected');
      assert.equal(connectedEvent.payload.phoneNumber, `+${ALICE}`);
      assert.ok(['consumer', 'smba'].includes(connectedEvent.payload.platform));
    });

    scenario('pair by code', async () => {
      await api('POST', '/api/sessions', { name: 'bob', start: true, engine: target.engine }, 201);
      const { code } = await api('POST', '/api/sessions/bob/pairing/code', { phoneNumber: `+${BOB}` });
      assert.match(code, /^[0-9A-Z]{8}$/);
      await target.enterCode('bob', code, BOB);
      await connected('bob');
      assert.equal((await status('bob')).phoneNumber, `+${BOB}`);
    });

    scenario('text both ways, quoted, with a webhook', async () => {
      await api('POST', '/api/webhooks', { url: hook.url, events: ['message.received'], session: 'bob' }, 201);
      const sent = await send('alice', jid(BOB), { type: 'text', text: 'hello bob' });
      assert.ok(sent.messageId);
      assert.equal(sent.status, 'sent');
      assert.equal(sent.phoneNumber, `+${BOB}`);
      const got = await received('bob', (p) => p.text === 'hello bob', 'text at bob');
      assert.equal(got.messageId, sent.messageId);
      assert.equal(got.chatId, jid(ALICE));
      assert.equal(got.fromMe, false);
      assert.equal(got.isGroup, false);
      assert.equal(got.type, 'text');
      assert.equal(got.from.phoneNumber, `+${ALICE}`);
      // the webhook gets the decrypted text too
      const delivery = await hook.next((b) => b.event === 'message.received' && b.payload.text === 'hello bob');
      assert.equal(delivery.session, 'bob');

      const reply = await send('bob', got.chatId, { type: 'text', text: 'hi alice', quotedMessage: { messageId: got.messageId } });
      const answer = await received('alice', (p) => p.text === 'hi alice', 'reply at alice');
      assert.equal(answer.messageId, reply.messageId);
      assert.equal(answer.quotedMessageId, sent.messageId);
      assert.equal(answer.from.phoneNumber, `+${BOB}`);
    });

    scenario('each message type', async () => {
      const media: Array<[string, Buffer, Record<string, unknown>]> = [
        ['image', png(24), { caption: 'an image' }],
        ['video', mp4(), { caption: 'a video' }],
        ['voice', ogg(), { ptt: true }],
        ['file', pdf(), { filename: 'report.pdf', caption: 'a file' }],
        ['sticker', webp(), {}],
      ];
      for (const [type, bytes, extra] of media) {
        const sent = await send('alice', jid(BOB), { type, base64: bytes.toString('base64'), ...extra });
        assert.ok(sent.mediaId, `${type}: the sender has a media record`);
        const got = await received('bob', (p) => p.messageId === sent.messageId, `${type} at bob`);
        assert.equal(got.type, type);
        assert.ok(got.mediaId, `${type}: mediaId`);
        assert.equal(got.media, undefined, 'the raw attachment is replaced by mediaId');
        if (extra.caption) assert.equal(got.caption, extra.caption);
        if (type === 'voice') assert.equal(got.ptt, true);
        if (type === 'file') assert.equal(got.filename, 'report.pdf');
        assert.equal(got.size, bytes.length, `${type}: size`);
        assert.ok((await download('bob', got.mediaId)).equals(bytes), `${type}: downloaded bytes equal the sent ones`);
      }

      // by URL: the gateway downloads into a file of its blob store and the engine sends from that file
      const files = await fileSite(new Map(media.map(([type, bytes]) => [`/${type}`, bytes])));
      try {
        for (const [type, bytes, extra] of media) {
          const sent = await send('alice', jid(BOB), { type, url: `${files.url}/${type}`, ...extra });
          assert.ok(sent.mediaId, `${type} by URL: the sender has a media record`);
          const got = await received('bob', (p) => p.messageId === sent.messageId, `${type} by URL at bob`);
          assert.equal(got.size, bytes.length, `${type} by URL: size`);
          assert.ok((await download('alice', sent.mediaId)).equals(bytes), `${type} by URL: the sender's copy equals the served bytes`);
          assert.ok((await download('bob', got.mediaId)).equals(bytes), `${type} by URL: the recipient's copy equals the served bytes`);
        }
      } finally {
        await files.close();
      }

      const poll = await send('alice', jid(BOB), { type: 'poll', pollTitle: 'Lunch?', pollOptions: ['pizza', 'salad', 'soup'], pollMultiSelect: true });
      const gotPoll = await received('bob', (p) => p.messageId === poll.messageId, 'poll at bob');
      assert.deepEqual(gotPoll.poll, { title: 'Lunch?', options: ['pizza', 'salad', 'soup'], multiSelect: true });

      const location = await send('alice', jid(BOB), { type: 'location', latitude: 52.52, longitude: 13.405, address: 'Berlin' });
      const gotLocation = await received('bob', (p) => p.messageId === location.messageId, 'location at bob');
      assert.equal(gotLocation.type, 'location');
      assert.equal(gotLocation.location.latitude, 52.52);
      assert.equal(gotLocation.location.longitude, 13.405);
      assert.equal(gotLocation.location.address, 'Berlin');

      const contact = await send('alice', jid(BOB), { type: 'contact', vcard: VCARD });
      const gotContact = await received('bob', (p) => p.messageId === contact.messageId, 'contact at bob');
      assert.equal(gotContact.type, 'contact');
      assert.equal(gotContact.displayName, 'Jane Roe');
      assert.match(gotContact.vcard, /waid=15550123456/);
    });

    scenario('a queued send goes out under the id chosen when it was queued', async () => {
      // one send a second, a burst of one: the second send waits in alice's queue (SendOptions.messageId reaches the engine)
      await api('PATCH', '/api/sessions/alice', { config: { governor: { perMinute: 60, burst: 1 } } });
      try {
        const async = { Prefer: 'respond-async' };
        const first = await daemon.request('POST', '/api/sessions/alice/messages/send', { chatId: jid(BOB), type: 'text', text: 'not queued' }, undefined, async);
        const second = await daemon.request('POST', '/api/sessions/alice/messages/send', { chatId: jid(BOB), type: 'text', text: 'queued' }, undefined, async);
        assert.deepEqual([first.status, second.status], [202, 202]);
        assert.equal(second.body.data.status, 'queued', JSON.stringify(second.body));
        const got = await received('bob', (p) => p.text === 'queued', 'the queued text at bob', 20_000);
        assert.equal(got.messageId, second.body.data.messageId);
        const result = await event('alice', 'command.result', (p) => p.commandId === second.body.data.commandId, 'its command.result');
        assert.deepEqual([result.payload.success, result.payload.result.messageId], [true, second.body.data.messageId]);
      } finally {
        await api('PATCH', '/api/sessions/alice', { config: { governor: null } });
      }
    });

    scenario('acks', async () => {
      const sent = await send('alice', jid(BOB), { type: 'text', text: 'please read' });
      const got = await received('bob', (p) => p.messageId === sent.messageId, 'text at bob');
      await event('alice', 'message.ack', (p) => p.messageId === sent.messageId && p.status === 'delivered', 'delivered ack');
      await api('POST', '/api/sessions/bob/messages/seen', { chatId: got.chatId, messageId: got.messageId });
      const read = await event('alice', 'message.ack', (p) => p.messageId === sent.messageId && p.status === 'read', 'read ack');
      assert.equal(read.payload.chatId, jid(BOB));
      assert.equal(read.payload.by?.phoneNumber, `+${BOB}`);
    });

    scenario('edit, delete, react', async () => {
      const sent = await send('alice', jid(BOB), { type: 'text', text: 'typo hree' });
      const got = await received('bob', (p) => p.messageId === sent.messageId, 'text at bob');
      await api('POST', `/api/sessions/alice/messages/${sent.messageId}/edit`, { text: 'typo here' });
      const edited = await event('bob', 'message.edited', (p) => p.messageId === sent.messageId, 'edit at bob');
      assert.equal(edited.payload.text, 'typo here');
      assert.equal(edited.payload.fromMe, false);
      assert.equal(edited.payload.from.phoneNumber, `+${ALICE}`);

      await api('POST', '/api/sessions/bob/messages/react', { chatId: got.chatId, messageId: got.messageId, reaction: '👍' });
      const reaction = await event('alice', 'message.reaction', (p) => p.messageId === sent.messageId && !p.fromMe, 'reaction at alice');
      assert.equal(reaction.payload.reaction, '👍');
      assert.equal(reaction.payload.from.phoneNumber, `+${BOB}`);

      await api('DELETE', `/api/sessions/alice/messages/${sent.messageId}`);
      const revoked = await event('bob', 'message.revoked', (p) => p.messageId === sent.messageId, 'revoke at bob');
      assert.equal(revoked.payload.chatId, jid(ALICE));
      // only once at the sender: the API's own event, not an echo of it
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(events.all((e) => e.session === 'alice' && e.event === 'message.revoked' && e.payload.messageId === sent.messageId).length, 1);
    });

    scenario('group with two members', async () => {
      const group = await api('POST', '/api/sessions/alice/groups', { session: 'alice', name: 'Conformance', participants: [`+${BOB}`] }, 201);
      assert.match(group.id, /@g\.us$/);
      assert.equal(group.name, 'Conformance');
      const members = group.participants as Array<{ phoneNumber?: string; isAdmin: boolean; isSuperAdmin: boolean }>;
      assert.equal(members.length, 2);
      assert.ok(members.find((m) => m.phoneNumber === `+${ALICE}`)?.isSuperAdmin);
      assert.equal(members.find((m) => m.phoneNumber === `+${BOB}`)?.isAdmin, false);
      await event('bob', 'group.update', (p) => p.id === group.id, 'group.update at bob');

      const atBob = await api('GET', `/api/sessions/bob/groups/${encodeURIComponent(group.id)}`);
      assert.equal(atBob.name, 'Conformance');

      const sent = await send('alice', group.id, { type: 'text', text: 'hello group' });
      const got = await received('bob', (p) => p.messageId === sent.messageId, 'group text at bob');
      assert.equal(got.chatId, group.id);
      assert.equal(got.isGroup, true);
      assert.equal(got.from.phoneNumber, `+${ALICE}`);
      const reply = await send('bob', group.id, { type: 'text', text: 'hello from bob' });
      const answer = await received('alice', (p) => p.messageId === reply.messageId, 'group reply at alice');
      assert.equal(answer.from.phoneNumber, `+${BOB}`);

      await api('PUT', `/api/sessions/alice/groups/${encodeURIComponent(group.id)}/subject`, { session: 'alice', value: 'Renamed' });
      const renamed = await event('bob', 'group.update', (p) => p.id === group.id && p.newSubject === 'Renamed', 'subject change at bob');
      assert.equal(renamed.payload.newSubject, 'Renamed');
    });

    scenario('presence', async () => {
      await api('POST', `/api/sessions/alice/presence/${encodeURIComponent(jid(BOB))}/subscribe`);
      await api('POST', '/api/sessions/bob/presence', { presence: 'available' });
      const online = await event('alice', 'presence.update', (p) => p.from?.phoneNumber === `+${BOB}` && p.presence === 'available', 'bob available at alice');
      assert.equal(online.payload.unavailable, false);
      await api('POST', '/api/sessions/bob/messages/typing', { chatId: jid(ALICE), state: 'composing' });
      const typing = await event('alice', 'presence.update', (p) => p.from?.phoneNumber === `+${BOB}` && p.state === 'composing', 'bob typing at alice');
      assert.equal(typing.payload.presence, 'composing');
    });

    // ---- issue 19, part 1: link previews, status posts, poll votes (history media follows restart and restore) ----

    scenario('link previews', async () => {
      const site = await previewSite();
      try {
        const link = `${site.url}/article`;
        const sent = await send('alice', jid(BOB), { type: 'text', text: `read this: ${link}.` });
        assert.deepEqual(sent.linkPreview, { status: 'sent', url: link });
        const got = await received('bob', (p) => p.messageId === sent.messageId, 'text with a preview at bob');
        assert.equal(got.linkPreview.url, link);
        assert.equal(got.linkPreview.title, 'A page worth reading');
        assert.equal(got.linkPreview.description, 'What the page is about');
        const thumbnail = Buffer.from(got.linkPreview.thumbnail, 'base64');
        assert.equal(thumbnail.subarray(0, 3).toString('hex'), 'ffd8ff', 'the thumbnail is a JPEG');
        const scaled = await Jimp.read(thumbnail);
        assert.ok(scaled.width <= 192 && scaled.height <= 192 && scaled.width > 0, `the 256 px cover is scaled down (${scaled.width}×${scaled.height})`);
        assert.ok(site.hits.includes('/article') && site.hits.includes('/cover.png'));

        // a page that cannot be read: the text goes without a preview, and the result says why
        const broken = await send('alice', jid(BOB), { type: 'text', text: `${site.url}/missing` });
        assert.equal(broken.linkPreview.status, 'failed');
        assert.match(broken.linkPreview.reason, /404/);
        const plain = await received('bob', (p) => p.messageId === broken.messageId, 'text without a preview at bob');
        assert.equal(plain.linkPreview, undefined);

        // linkPreview: false fetches nothing
        const before = site.hits.length;
        const off = await send('alice', jid(BOB), { type: 'text', text: `${site.url}/article again`, linkPreview: false });
        assert.equal(off.linkPreview, undefined);
        await received('bob', (p) => p.messageId === off.messageId, 'text sent with linkPreview false');
        assert.equal(site.hits.length, before);
      } finally {
        await site.close();
      }
    });

    scenario('status posts', async () => {
      // alice's contacts (bob wrote to her) are the viewers when the body names none
      const sent = await send('alice', 'status@broadcast', { type: 'text', text: 'my first status' });
      assert.equal(sent.chatId, 'status@broadcast');
      assert.ok(sent.statusViewers >= 1);
      const got = await received('bob', (p) => p.messageId === sent.messageId, 'status at bob');
      assert.equal(got.chatId, 'status@broadcast');
      assert.equal(got.isGroup, false);
      assert.equal(got.fromMe, false);
      assert.equal(got.text, 'my first status');
      assert.equal(got.from.phoneNumber, `+${ALICE}`);

      // every message type: a picture status to named viewers, downloaded by a viewer
      const image = png(20);
      const pictured = await send('alice', 'status@broadcast', { type: 'image', base64: image.toString('base64'), caption: 'sunset', statusViewers: [`+${BOB}`] });
      assert.equal(pictured.statusViewers, 1);
      const gotImage = await received('bob', (p) => p.messageId === pictured.messageId, 'image status at bob');
      assert.equal(gotImage.chatId, 'status@broadcast');
      assert.equal(gotImage.caption, 'sunset');
      assert.ok((await download('bob', gotImage.mediaId)).equals(image));

      const misplaced = await daemon.request('POST', '/api/messages/send', { session: 'alice', chatId: jid(BOB), type: 'text', text: 'x', statusViewers: [`+${BOB}`] });
      assert.equal(misplaced.status, 400);
      assert.equal(misplaced.body.error.code, 'VALIDATION_FAILED');
    });

    scenario('casting a poll vote', async () => {
      const poll = await send('alice', jid(BOB), { type: 'poll', pollTitle: 'Dinner?', pollOptions: ['pasta', 'curry', 'tacos'] });
      const got = await received('bob', (p) => p.messageId === poll.messageId, 'poll at bob');
      const vote = (options: string[]) => daemon.request('POST', '/api/messages/poll-vote', { session: 'bob', chatId: got.chatId, pollMessageId: got.messageId, options });

      const refused = await vote(['pasta', 'curry']);
      assert.equal(refused.status, 400, 'a single-choice poll takes one option');
      assert.equal((await vote(['pizza'])).status, 400, 'not an option of the poll');

      const cast = await vote(['curry']);
      assert.equal(cast.status, 200, JSON.stringify(cast.body));
      assert.deepEqual(cast.body.data.selectedOptions, ['curry']);
      assert.equal(cast.body.data.pollMessageId, poll.messageId);
      // the creator decrypts it (on Baileys: with the poll's secret, as for any WhatsApp vote)
      const atAlice = await event('alice', 'message.vote', (p) => p.pollMessageId === poll.messageId, 'vote at alice');
      assert.deepEqual(atAlice.payload.selectedOptions, ['curry']);
      assert.equal(atAlice.payload.voter.phoneNumber, `+${BOB}`);
      assert.equal(atAlice.payload.chatId, jid(BOB));
      const own = await event('bob', 'message.vote', (p) => p.pollMessageId === poll.messageId, 'own vote at bob');
      assert.equal(own.payload.voter.phoneNumber, `+${BOB}`);

      const missing = await daemon.request('POST', '/api/messages/poll-vote', { session: 'bob', chatId: got.chatId, pollMessageId: '3EB0000000000000000000', options: [] });
      assert.equal(missing.status, 404);
    });

    scenario('restart and restore', async () => {
      const previous = events;
      daemon = await target.restartDaemon();
      previous.close();
      events = await collectEvents(daemon);
      await connected('alice');
      await connected('bob');
      const sent = await send('alice', jid(BOB), { type: 'text', text: 'after restart' });
      await received('bob', (p) => p.messageId === sent.messageId, 'text at bob after restart');
      const back = await send('bob', jid(ALICE), { type: 'text', text: 'still here' });
      await received('alice', (p) => p.messageId === back.messageId, 'text at alice after restart');
    });

    // ---- issue 19, part 2: pictures (set, read, remove), and identities across restarts ----

    scenario('group and profile pictures', async () => {
      const group = await api('POST', '/api/sessions/alice/groups', { session: 'alice', name: 'Pictures', participants: [`+${BOB}`] }, 201);
      const gid = encodeURIComponent(group.id);
      await event('bob', 'group.update', (p) => p.id === group.id, 'the group at bob');
      const pictureAt = (session: string, path: string) => daemon.request('GET', `/api/sessions/${session}/${path}`);
      const none = await pictureAt('bob', `groups/${gid}/picture`);
      assert.equal(none.status, 404, JSON.stringify(none.body));
      assert.equal(none.body.error.code, 'PICTURE_NOT_FOUND');

      await api('PUT', `/api/sessions/alice/groups/${gid}/picture`, { base64: png(700).toString('base64') });
      const seen = await api('GET', `/api/sessions/bob/groups/${gid}/picture`);
      assert.equal(seen.id, group.id);
      assert.match(seen.url, /^(https:\/\/|sandbox:picture:)/);
      assert.equal((await api('GET', `/api/sessions/alice/groups/${gid}/picture`)).url, seen.url);
      const refused = await daemon.request('DELETE', `/api/sessions/bob/groups/${gid}/picture`);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'NOT_GROUP_ADMIN');
      await api('DELETE', `/api/sessions/alice/groups/${gid}/picture`);
      assert.equal((await pictureAt('bob', `groups/${gid}/picture`)).status, 404);

      const aliceAtBob = `contacts/${encodeURIComponent(`+${ALICE}`)}/picture`;
      assert.equal((await pictureAt('bob', aliceAtBob)).status, 404);
      const notAnImage = await daemon.request('PUT', '/api/sessions/alice/profile/picture', { base64: Buffer.from('not an image at all').toString('base64') });
      assert.equal(notAnImage.status, 400, JSON.stringify(notAnImage.body));
      assert.equal(notAnImage.body.error.code, 'VALIDATION_FAILED');
      await api('PUT', '/api/sessions/alice/profile/picture', { base64: png(320).toString('base64') });
      const profile = await api('GET', `/api/sessions/bob/${aliceAtBob}`);
      assert.equal(profile.id, jid(ALICE));
      assert.match(profile.url, /^https:\/\//);
      assert.equal((await api('GET', `/api/sessions/alice/${aliceAtBob}`)).url, profile.url, 'the session reads its own picture too');
      await api('DELETE', '/api/sessions/alice/profile/picture');
      assert.equal((await pictureAt('bob', aliceAtBob)).status, 404);
    });


    scenario('identities survive a restart', async () => {
      await target.addContact(CAROL);
      const [check] = await api('POST', '/api/sessions/alice/contacts/check', { phoneNumbers: [`+${CAROL}`] });
      assert.equal(check.registered, true);
      const carolLid = check.lid as string;
      assert.match(carolLid, /@lid$/);
      await waitFor(async () => (await readDaemonDb(daemon.dataDir, (db) => db.prepare('SELECT lid FROM identities WHERE session = ? AND pn = ?').pluck().get('alice', jid(CAROL)))) === carolLid, 5_000, 'the pair stored');

      const previous = events;
      daemon = await target.restartDaemon();
      previous.close();
      events = await collectEvents(daemon);
      await connected('alice');

      // the network names carol by LID only: the number comes from what alice learnt before the restart
      await target.contactSends(CAROL, 'alice', ALICE, 'lid only after restart', { senderLidOnly: true });
      const got = await received('alice', (p) => p.text === 'lid only after restart', 'lid-only text at alice');
      assert.equal(got.from.lid, carolLid);
      assert.equal(got.from.phoneNumber, `+${CAROL}`);
      assert.equal(got.from.jid, jid(CAROL));
      assert.equal(got.chatId, jid(CAROL));

      // and a send to her number reaches her, reported with her LID
      const sent = await send('alice', jid(CAROL), { type: 'text', text: 'to your number' });
      assert.equal(sent.phoneNumber, `+${CAROL}`);
      assert.equal(sent.lid, carolLid);
      await event('alice', 'message.ack', (p) => p.messageId === sent.messageId && (p.status === 'delivered' || p.status === 'read'), 'carol got it');
    });

    scenario('history media', async () => {
      const image = png(28);
      const caption = `an old picture ${Date.now()}`;
      await target.syncHistoryImage('bob', BOB, image, caption);
      await event('bob', 'history.sync', (p) => p.messageCount >= 1, 'history.sync at bob');
      const stored = await waitFor(
        () => readDaemonDb(daemon.dataDir, (db) => db.prepare<{ id: string; type: string; mediaId: string | null }>("SELECT id, type, media_id AS \"mediaId\" FROM messages WHERE session = 'bob' AND text = ?").get(caption)),
        10_000,
        'the history message stored',
      );
      assert.equal(stored.type, 'image');
      assert.ok(stored.mediaId, 'a history media message has a mediaId');
      // lazily: a reference only, no bytes fetched until someone downloads it
      const record = (await readDaemonDb(daemon.dataDir, (db) => db.prepare<{ blob: string | null; ref: string | null }>('SELECT blob, ref FROM media WHERE id = ?').get(stored.mediaId)))!;
      assert.equal(record.blob, null);
      assert.ok(record.ref);
      const view = await api('GET', `/api/sessions/bob/media/${stored.mediaId}`);
      assert.equal(view.mimeType, 'image/png');
      assert.ok((await download('bob', stored.mediaId!)).equals(image), 'the downloaded bytes equal the phone\'s');
    });

    scenario('chat list, history and search', async () => {
      const first = await send('alice', jid(BOB), { type: 'text', text: 'conformance zebra one' });
      const got = await received('bob', (p) => p.messageId === first.messageId, 'first at bob');
      await event('alice', 'message.ack', (p) => p.messageId === first.messageId && p.status === 'delivered', 'delivered ack');
      await api('POST', '/api/sessions/bob/messages/react', { chatId: got.chatId, messageId: got.messageId, reaction: '🎉' });
      await event('alice', 'message.reaction', (p) => p.messageId === first.messageId && !p.fromMe, 'reaction at alice');
      // WhatsApp times a message to the second: bob's answer is a second later than what alice read up to (her own send)
      await new Promise((r) => setTimeout(r, 1100));
      const second = await send('bob', jid(ALICE), { type: 'text', text: 'conformance zebra two' });
      await received('alice', (p) => p.messageId === second.messageId, 'second at alice');

      // the chat list: bob's chat first (the newest activity), its last message bob's, unread
      const list = await api('GET', '/api/sessions/alice/chats?limit=5');
      assert.equal(list.chats[0].chatId, jid(BOB), JSON.stringify(list.chats.map((c: { chatId: string }) => c.chatId)));
      const chat = list.chats[0];
      assert.deepEqual([chat.lastMessage.messageId, chat.lastMessage.fromMe, chat.lastMessage.text], [second.messageId, false, 'conformance zebra two']);
      assert.ok(chat.unreadCount >= 1, `unread ${chat.unreadCount}`);
      assert.equal(chat.isGroup, false);
      assert.equal((await api('GET', `/api/sessions/alice/chats/${jid(BOB)}`)).lastMessage.messageId, second.messageId);
      const groups = await api('GET', '/api/sessions/alice/chats?groups=true');
      assert.ok(groups.chats.length >= 1 && groups.chats.every((c: { isGroup: boolean }) => c.isGroup), 'the group of an earlier scenario, alone');

      // history: the two newest, oldest first, the first with its acks and bob's reaction; older pages before them
      const page = await api('GET', `/api/sessions/alice/chats/${jid(BOB)}/messages?limit=2`);
      assert.deepEqual(page.messages.map((m: { messageId: string }) => m.messageId), [first.messageId, second.messageId]);
      const [mine] = page.messages;
      assert.deepEqual(mine.acks.slice(0, 1).map((a: { status: string }) => a.status), ['sent']);
      assert.ok(mine.acks.some((a: { status: string }) => a.status === 'delivered'), JSON.stringify(mine.acks));
      assert.deepEqual(mine.reactions.map((r: { emoji: string }) => r.emoji), ['🎉']);
      assert.ok(page.nextBefore, 'earlier scenarios left older messages');
      const older = await api('GET', `/api/sessions/alice/chats/${jid(BOB)}/messages?limit=50&before=${encodeURIComponent(page.nextBefore)}`);
      assert.ok(older.messages.some((m: { text: string | null }) => m.text === 'hello bob'), 'the first scenario\'s text');
      assert.equal((await api('GET', `/api/sessions/alice/messages/${second.messageId}`)).text, 'conformance zebra two');

      // search, newest first, with a snippet
      const results = await waitFor(async () => {
        const found = (await api('GET', '/api/sessions/alice/messages/search?q=zebra')).results;
        return found.length === 2 ? found : undefined;
      }, 10_000, 'both messages found');
      assert.deepEqual(results.map((r: { message: { messageId: string } }) => r.message.messageId), [second.messageId, first.messageId]);
      assert.match(results[0].snippet, /zebra/);
    });

    scenario('calls', async () => {
      await target.addContact(ERIN);
      // a call rings: call.received names the caller by phone and LID
      const callId = await target.contactCalls(ERIN, 'alice', ALICE, { isVideo: true });
      const rang = (await event('alice', 'call.received', (p) => p.callId === callId, 'call.received at alice')).payload;
      assert.equal(rang.from.phoneNumber, `+${ERIN}`);
      assert.match(rang.from.lid ?? '', /@lid$/);
      assert.equal(rang.chatId, jid(ERIN));
      assert.equal(rang.status, 'ringing');
      assert.equal(rang.isVideo, true);
      assert.equal(rang.isGroup, false);
      assert.ok(Date.parse(rang.offeredAt) > Date.now() - 60_000);

      // another session (bob) does not know alice's call; a malformed id is refused before any work
      const foreign = await daemon.request('POST', `/api/sessions/bob/calls/${callId}/reject`, {});
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.error.code, 'CALL_NOT_FOUND');
      assert.equal((await daemon.request('POST', '/api/sessions/alice/calls/not%20an%20id/reject', {})).status, 400);

      // rejected through the route: call.rejected by the gateway, and the caller saw it declined
      await api('POST', `/api/sessions/alice/calls/${callId}/reject`, {});
      const rejected = (await event('alice', 'call.rejected', (p) => p.callId === callId, 'call.rejected at alice')).payload;
      assert.equal(rejected.endedBy, 'gateway');
      assert.equal(rejected.status, 'rejected');
      assert.equal(rejected.offeredAt, rang.offeredAt);
      assert.equal(rejected.from.phoneNumber, `+${ERIN}`);
      await target.callerSawReject(ERIN, 'alice', callId);
      const again = await daemon.request('POST', `/api/sessions/alice/calls/${callId}/reject`, {});
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, 'CALL_ENDED');
      const unknown = await daemon.request('POST', '/api/sessions/alice/calls/0123456789ABCDEF0123456789ABCDEF/reject', {});
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'CALL_NOT_FOUND');

      // a call nobody answers rings out: call.missed by timeout, and it can no longer be rejected
      const unanswered = await target.contactCalls(ERIN, 'alice', ALICE);
      await event('alice', 'call.received', (p) => p.callId === unanswered, 'the second call rings');
      await target.callEnds(ERIN, 'alice', unanswered, 'timeout');
      const missed = (await event('alice', 'call.missed', (p) => p.callId === unanswered, 'call.missed at alice')).payload;
      assert.equal(missed.endedBy, 'timeout');
      assert.equal(missed.isVideo, false);
      assert.equal((await daemon.request('POST', `/api/sessions/alice/calls/${unanswered}/reject`, {})).body.error.code, 'CALL_ENDED');
      // the caller hangs up before an answer: missed too, ended by the caller
      const hungUp = await target.contactCalls(ERIN, 'alice', ALICE);
      await event('alice', 'call.received', (p) => p.callId === hungUp, 'the third call rings');
      await target.callEnds(ERIN, 'alice', hungUp, 'cancelled');
      assert.equal((await event('alice', 'call.missed', (p) => p.callId === hungUp, 'call.missed by the caller')).payload.endedBy, 'caller');

      // config.calls: every call is rejected at once, with no request, and the caller gets the text
      const replyText = `Calls are not answered here; please write. ${Date.now()}`;
      const updated = await api('PATCH', '/api/sessions/alice', { config: { calls: { reject: true, replyText } } });
      assert.deepEqual(updated.config.calls, { reject: true, replyText });
      const policed = await target.contactCalls(ERIN, 'alice', ALICE);
      const auto = (await event('alice', 'call.rejected', (p) => p.callId === policed, 'the call rejected by the policy')).payload;
      assert.equal(auto.endedBy, 'auto');
      await target.callerSawReject(ERIN, 'alice', policed);
      const reply = (await event('alice', 'message.sent', (p) => p.text === replyText, 'the reply to the caller')).payload;
      assert.equal(reply.chatId, jid(ERIN));
      await target.contactReceived(ERIN, 'alice', reply.messageId, replyText);
      // the policy removed: calls ring again
      assert.equal((await api('PATCH', '/api/sessions/alice', { config: { calls: null } })).config.calls, undefined);
      const free = await target.contactCalls(ERIN, 'alice', ALICE);
      await event('alice', 'call.received', (p) => p.callId === free, 'a call rings once the policy is gone');
      await target.callEnds(ERIN, 'alice', free, 'timeout');
      await event('alice', 'call.missed', (p) => p.callId === free, 'it rings out');
    });

    // ---- issue 30: identities (phone number ↔ LID) ----

    scenario('identities', async () => {
      // a new contact writes: the pair is learnt, and told once
      await target.addContact(DAVE);
      await target.contactSends(DAVE, 'alice', ALICE, 'hello from dave');
      const first = await received('alice', (p) => p.text === 'hello from dave', 'dave at alice');
      const learnt = await event('alice', 'contact.identity', (p) => p.phoneNumber === `+${DAVE}`, 'contact.identity of dave');
      const daveLid = learnt.payload.lid as string;
      assert.match(daveLid, /@lid$/);
      assert.equal(learnt.payload.jid, jid(DAVE));
      assert.deepEqual(first.from, { jid: jid(DAVE), phoneNumber: `+${DAVE}`, lid: daveLid });
      await target.contactSends(DAVE, 'alice', ALICE, 'dave again', { senderLidOnly: true });
      const again = await received('alice', (p) => p.text === 'dave again', 'dave by LID at alice');
      assert.equal(again.chatId, jid(DAVE), 'a LID-addressed message of a known number is in the number\'s chat');
      assert.equal(events.all((e) => e.session === 'alice' && e.event === 'contact.identity' && e.payload.phoneNumber === `+${DAVE}`).length, 1, 'once per pair');

      // the identity of a contact known by phone and LID, either way
      const byPhone = await waitFor(async () => {
        const res = await daemon.request('GET', `/api/sessions/alice/contacts/${encodeURIComponent(`+${DAVE}`)}/identity`);
        return res.status === 200 && res.body.data.seenAt !== null ? res.body.data : undefined;
      }, 5_000, 'dave\'s identity stored');
      assert.deepEqual({ jid: byPhone.jid, phoneNumber: byPhone.phoneNumber, lid: byPhone.lid }, { jid: jid(DAVE), phoneNumber: `+${DAVE}`, lid: daveLid });
      assert.equal(byPhone.source, learnt.payload.source, 'where the pair was learnt');
      assert.ok(Date.parse(byPhone.learntAt) > 0);
      const byLid = await api('GET', `/api/sessions/alice/contacts/${encodeURIComponent(daveLid)}/identity`);
      assert.equal(byLid.jid, jid(DAVE));
      assert.equal(byLid.id, daveLid);
      const unknown = await daemon.request('GET', `/api/sessions/alice/contacts/${encodeURIComponent('100000000000999@lid')}/identity`);
      assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
      assert.equal(unknown.body.error.code, 'IDENTITY_NOT_FOUND');

      // a batch: a known number, one not on the network, a LID, and a number asked of the network
      const [known, nobody, lid, bob] = await api('POST', '/api/sessions/alice/identities/lookup', { ids: [`+${DAVE}`, `+${NOBODY}`, daveLid, jid(BOB)] });
      assert.equal(known.lid, daveLid);
      assert.equal(nobody, null);
      assert.equal(lid.phoneNumber, `+${DAVE}`);
      assert.equal(bob.phoneNumber, `+${BOB}`);
      assert.match(bob.lid, /@lid$/);
      const bobLid = bob.lid as string;

      // a send to the LID and one to the number: one chat at the peer, one chat row at the sender
      const toLid = await send('alice', bobLid, { type: 'text', text: 'to your lid' });
      const toNumber = await send('alice', jid(BOB), { type: 'text', text: 'to your number' });
      assert.equal(toLid.chatId, jid(BOB));
      assert.equal(toNumber.chatId, jid(BOB));
      assert.equal(toLid.lid, bobLid);
      const atBob = await Promise.all([toLid, toNumber].map((s) => received('bob', (p) => p.messageId === s.messageId, `${s.messageId} at bob`)));
      assert.deepEqual(atBob.map((p) => p.chatId), [jid(ALICE), jid(ALICE)], 'one chat at the peer');
      assert.equal((await api('GET', `/api/sessions/alice/messages/${toLid.messageId}`)).chatId, jid(BOB));
      await event('alice', 'message.ack', (p) => p.messageId === toLid.messageId && p.chatId === jid(BOB), 'the LID send\'s ack names the same chat');
      const chats = (await api('GET', '/api/sessions/alice/chats?limit=1000')).chats as Array<{ chatId: string }>;
      assert.deepEqual(chats.filter((c) => c.chatId === jid(BOB) || c.chatId === bobLid).map((c) => c.chatId), [jid(BOB)]);
    });

    scenario('chat actions', async () => {
      const chat = async () => api('GET', `/api/sessions/alice/chats/${jid(BOB)}`);
      const act = async (action: string, body?: unknown) => {
        const view = await api('POST', `/api/sessions/alice/chats/${jid(BOB)}/${action}`, body);
        assert.equal(view.chatId, jid(BOB));
        return view;
      };
      const chatEvent = (type: string, match: (p: any) => boolean, what: string) => event('alice', type, (p) => p.chatId === jid(BOB) && match(p), what);
      const since = Date.now();
      const after = (e: StreamedEvent) => Date.parse(e.timestamp) >= since - 1000;

      assert.equal((await act('archive')).archived, true);
      assert.ok(after(await chatEvent('chat.archive', (p) => p.archived === true, 'chat.archive (archived)')));
      assert.equal((await chat()).archived, true);
      assert.equal((await act('unarchive')).archived, false);
      await chatEvent('chat.archive', (p) => p.archived === false, 'chat.archive (unarchived)');
      assert.equal((await chat()).archived, false);

      assert.equal((await act('pin')).pinned, true);
      await chatEvent('chat.pin', (p) => p.pinned === true, 'chat.pin (pinned)');
      assert.equal((await chat()).pinned, true);
      assert.equal((await act('unpin')).pinned, false);
      await chatEvent('chat.pin', (p) => p.pinned === false, 'chat.pin (unpinned)');
      assert.equal((await chat()).pinned, false);

      const muted = await act('mute', { duration: 3600 });
      assert.equal(muted.muted, true);
      await chatEvent('chat.mute', (p) => p.muted === true && p.muteEndTime === muted.muteEndTime, 'chat.mute (muted for an hour)');
      assert.equal((await act('mute', { forever: true })).muteEndTime, null);
      await chatEvent('chat.mute', (p) => p.muted === true && p.muteEndTime === null, 'chat.mute (muted for good)');
      assert.equal((await chat()).muted, true);
      assert.equal((await act('unmute')).muted, false);
      await chatEvent('chat.mute', (p) => p.muted === false && p.muteEndTime === null, 'chat.mute (unmuted)');
      assert.equal((await chat()).muted, false, 'an unmute reads as unmuted');

      assert.equal((await act('unread')).unreadCount, 1);
      await chatEvent('chat.read', (p) => p.read === false, 'chat.read (unread)');
      assert.equal((await chat()).unreadCount, 1);
      assert.equal((await act('read')).unreadCount, 0);
      await chatEvent('chat.read', (p) => p.read === true, 'chat.read (read)');
      assert.equal((await chat()).unreadCount, 0);

      const reached = await target.chatActionsReceived(ALICE);
      if (reached) {
        const mine = reached.filter((r) => r.chatId === jid(BOB)).map((r) => r.action);
        assert.deepEqual(mine.slice(-9), ['archive', 'unarchive', 'pin', 'unpin', 'mute', 'mute', 'unmute', 'unread', 'read'], JSON.stringify(reached));
      } else {
        assert.equal(target.engine, 'sandbox', 'only the sandbox has no network of its own to ask');
      }
    });

    scenario('backfill', async () => {
      await target.addContact(FRANK);
      await target.seedOlderMessages('bob', BOB, FRANK, [{ text: 'older one' }, { text: 'older two', fromMe: true }, { text: 'older three' }]);
      const now = `backfill anchor ${Date.now()}`;
      await target.contactSends(FRANK, 'bob', BOB, now);
      await received('bob', (p) => p.text === now, 'the anchor message at bob');
      const chat = encodeURIComponent(jid(FRANK));
      const stored = async () => ((await api('GET', `/api/sessions/bob/chats/${chat}/messages`)).messages as Array<{ text: string; fromMe: boolean }>);
      await waitFor(async () => ((await stored()).some((m) => m.text === now) ? true : undefined), 10_000, 'the anchor stored');

      const asked = await api('POST', `/api/sessions/bob/chats/${chat}/history`, { count: 2 }, 202);
      assert.equal(asked.chatId, jid(FRANK));
      const sync = await event('bob', 'history.sync', (p) => p.requestId === asked.requestId, 'the phone answers the history request');
      assert.equal(sync.payload.syncType, 'ON_DEMAND');
      assert.equal(sync.payload.progress, 100);
      assert.equal(sync.payload.messageCount, 2);
      const messages = await waitFor(async () => {
        const all = await stored();
        return all.length === 3 ? all : undefined;
      }, 10_000, 'the older messages stored');
      assert.deepEqual(messages.map((m) => m.text), ['older two', 'older three', now], 'the two newest of the older ones, in order');
      assert.deepEqual(messages.map((m) => m.fromMe), [true, false, false]);

      // again: from the new oldest, the one left
      const again = await api('POST', `/api/sessions/bob/chats/${chat}/history`, {}, 202);
      await event('bob', 'history.sync', (p) => p.requestId === again.requestId && p.messageCount === 1, 'the second answer');
      await waitFor(async () => ((await stored()).length === 4 ? true : undefined), 10_000, 'the oldest stored');
      assert.deepEqual((await stored()).map((m) => m.text), ['older one', 'older two', 'older three', now]);
    });

    scenario('refused and unacked sends', async () => {
      const failedCount = async (reason: string) => valueOf(await scrape(daemon.url, daemon.masterKey), 'gateway_messages_failed_total', { reason });
      const before = { reachout_timelocked: await failedCount('reachout_timelocked'), rate_limited: await failedCount('rate_limited'), timeout: await failedCount('timeout') };
      const detail = (id: string) => api('GET', `/api/sessions/alice/messages/${id}`);
      const detailOf = (res: { body: any }, path: string) => (res.body.error.details as Array<{ path: string; message: string }>).find((d) => d.path === path)?.message;

      // 463 at once: a 422 naming the message, which is stored as failed, with its event
      await target.failNextSend('alice', ALICE, BOB, { nack: '463' });
      const timelocked = await daemon.request('POST', '/api/messages/send', { session: 'alice', chatId: jid(BOB), type: 'text', text: 'timelocked' });
      assert.equal(timelocked.status, 422, JSON.stringify(timelocked.body));
      assert.equal(timelocked.body.error.code, 'MESSAGE_REFUSED');
      assert.equal(detailOf(timelocked, '/reason'), 'reachout_timelocked');
      assert.equal(detailOf(timelocked, '/code'), '463');
      const timelockedId = detailOf(timelocked, '/messageId')!;
      const failed = await event('alice', 'message.failed', (p) => p.messageId === timelockedId, 'message.failed 463');
      assert.deepEqual({ reason: failed.payload.reason, code: failed.payload.code, chatId: failed.payload.chatId }, { reason: 'reachout_timelocked', code: '463', chatId: jid(BOB) });
      const stored = await detail(timelockedId);
      assert.equal(stored.status, 'failed');
      assert.equal(stored.text, 'timelocked');
      assert.deepEqual({ reason: stored.failure.reason, code: stored.failure.code }, { reason: 'reachout_timelocked', code: '463' });
      assert.deepEqual(stored.statusHistory.map((h: { status: string }) => h.status), ['pending', 'failed']);

      // 429 at once: a 429 with Retry-After
      await target.failNextSend('alice', ALICE, BOB, { nack: '429' });
      const limited = await daemon.request('POST', '/api/messages/send', { session: 'alice', chatId: jid(BOB), type: 'text', text: 'too fast' });
      assert.equal(limited.status, 429, JSON.stringify(limited.body));
      assert.equal(limited.body.error.code, 'MESSAGE_RATE_LIMITED');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
      assert.equal(detailOf(limited, '/reason'), 'rate_limited');
      assert.equal((await detail(detailOf(limited, '/messageId')!)).status, 'failed');

      // an async send refused: command.result says so, with the same error
      await target.failNextSend('alice', ALICE, BOB, { nack: '463' });
      const accepted = await daemon.request('POST', '/api/messages/send', { session: 'alice', chatId: jid(BOB), type: 'text', text: 'async timelocked' }, undefined, { Prefer: 'respond-async' });
      assert.equal(accepted.status, 202);
      const result = await event('alice', 'command.result', (p) => p.commandId === accepted.body.data.commandId, 'command.result');
      assert.equal(result.payload.success, false);
      assert.equal(result.payload.error.code, 'MESSAGE_REFUSED');
      const asyncId = (result.payload.error.details as Array<{ path: string; message: string }>).find((d) => d.path === '/messageId')!.message;
      assert.equal((await detail(asyncId)).status, 'failed');

      // no ack: pending, then failed with timeout; the late ack moves it on, and it is delivered
      await target.failNextSend('alice', ALICE, BOB, 'no-ack');
      const unacked = await send('alice', jid(BOB), { type: 'text', text: 'slow server' });
      assert.equal(unacked.status, 'pending');
      const timedOut = await event('alice', 'message.failed', (p) => p.messageId === unacked.messageId, 'message.failed timeout', 15_000);
      assert.equal(timedOut.payload.reason, 'timeout');
      assert.equal(timedOut.payload.code, undefined);
      assert.equal((await detail(unacked.messageId)).status, 'failed');
      await target.releaseWithheld('alice');
      await event('alice', 'message.ack', (p) => p.messageId === unacked.messageId && p.status === 'sent', 'late server ack');
      await received('bob', (p) => p.messageId === unacked.messageId, 'the late message at bob');
      await event('alice', 'message.ack', (p) => p.messageId === unacked.messageId && p.status === 'delivered', 'delivered after the timeout');
      const movedOn = await detail(unacked.messageId);
      assert.equal(movedOn.status, 'delivered');
      assert.equal(movedOn.failure.reason, 'timeout', 'the failure stays in its history');
      assert.deepEqual(movedOn.statusHistory.map((h: { status: string }) => h.status), ['pending', 'failed', 'sent', 'delivered']);

      // nothing refused reached bob; the metrics counted each failure
      for (const id of [timelockedId, asyncId]) assert.equal(events.all((e) => e.session === 'bob' && e.event === 'message.received' && e.payload.messageId === id).length, 0);
      assert.equal(await failedCount('reachout_timelocked'), before.reachout_timelocked + 2);
      assert.equal(await failedCount('rate_limited'), before.rate_limited + 1);
      assert.equal(await failedCount('timeout'), before.timeout + 1);
    });

    scenario('decryption failures and retries', async () => {
      await target.addContact(GRACE);
      const counts = async () => (await status('alice')).decryption;
      const before = await counts();
      assert.ok(before, 'a running session has decryption counters');

      // a message alice cannot decrypt, recovered by the contact's answer to her retry receipt
      const recoveredId = await target.contactSendsUndecryptable(GRACE, 'alice', ALICE, 'readable on the second try', true);
      const recovered = await received('alice', (p) => p.messageId === recoveredId, 'the recovered message');
      assert.equal(recovered.text, 'readable on the second try');
      assert.equal(recovered.from.phoneNumber, `+${GRACE}`);

      // one the contact never sends again: given up on after engine.decryption.undecryptableAfterSeconds
      const lostId = await target.contactSendsUndecryptable(GRACE, 'alice', ALICE, 'never readable', false);
      const lost = await event('alice', 'message.undecryptable', (p) => p.messageId === lostId, 'message.undecryptable', 30_000);
      assert.equal(lost.payload.chatId, jid(GRACE));
      assert.equal(lost.payload.sender.phoneNumber, `+${GRACE}`);
      assert.equal(lost.payload.kind, 'invalid_prekey');
      assert.equal(lost.payload.retries, 1);
      // the recovered one failed first: had it been followed still, it would have been reported before this one
      assert.equal(events.all((e) => e.event === 'message.undecryptable' && e.payload.messageId === recoveredId).length, 0);
      assert.equal(events.all((e) => e.event === 'message.received' && e.payload.messageId === lostId).length, 0);

      // alice's message the contact cannot decrypt once: re-sent (from the store or Baileys' cache) and delivered
      await target.contactAsksAgain(GRACE, 'alice', 1);
      const once = await send('alice', jid(GRACE), { type: 'text', text: 'sent again once' });
      await target.contactReceived(GRACE, 'alice', once.messageId, 'sent again once');

      // asked for past the retry limit: failed
      await target.contactAsksAgain(GRACE, 'alice', 5);
      const tooOften = await send('alice', jid(GRACE), { type: 'text', text: 'asked for too often' });
      const failed = await event('alice', 'message.failed', (p) => p.messageId === tooOften.messageId, 'message.failed');
      assert.equal(failed.payload.reason, 'decryption_retry_exhausted');
      assert.equal(failed.payload.chatId, jid(GRACE));

      const after = await counts();
      assert.equal(after.failures.invalid_prekey - before.failures.invalid_prekey, 2);
      assert.equal(after.retryReceiptsSent - before.retryReceiptsSent, 2, 'one retry receipt for each undecryptable message');
      assert.equal(after.retryReceiptsReceived - before.retryReceiptsReceived, 4, 'once for the first send, three times (two answered) for the second');
      assert.equal(after.retriesExhausted.incoming - before.retriesExhausted.incoming, 1);
      assert.equal(after.retriesExhausted.outgoing - before.retriesExhausted.outgoing, 1);
      const samples = await scrape(daemon.url, daemon.masterKey);
      assert.equal(valueOf(samples, 'gateway_decryption_failures_total', { session: 'alice', kind: 'invalid_prekey' }), after.failures.invalid_prekey);
      assert.equal(valueOf(samples, 'gateway_decryption_retries_exhausted_total', { session: 'alice', direction: 'incoming' }), after.retriesExhausted.incoming);
      assert.equal(valueOf(samples, 'gateway_decryption_retry_receipts_total', { session: 'alice', direction: 'received' }), after.retryReceiptsReceived);
    });

    scenario('forced logouts', async () => {
      await api('POST', '/api/sessions', { name: 'gina', start: true, engine: target.engine }, 201);
      const qr = await waitFor(async () => {
        const res = await daemon.request('GET', '/api/sessions/gina/pairing/qr');
        return res.status === 200 ? (res.body.data as { qr: string }) : undefined;
      }, 10_000, 'a QR code for gina');
      await target.scanQr('gina', qr.qr, GINA);
      await connected('gina');
      const healthy = await status('gina');
      assert.equal(healthy.health, 'healthy', 'a CONNECTED session is watched');
      assert.ok(Date.parse(healthy.lastFrameAt) > Date.parse(healthy.createdAt), 'frames came since the session was made');
      // every reason but `unlinked` keeps the credentials: a start connects again with them
      for (const reason of LOGOUT_REASONS.filter((r) => r !== 'unlinked')) {
        await target.forceLogout('gina', GINA, reason);
        const down = await event('gina', 'session.status', (p) => p.status === 'DISCONNECTED' && p.lastError?.logoutReason === reason, `gina DISCONNECTED (${reason})`);
        assert.equal(down.payload.statusReason, LOGOUT_OUTCOMES[reason].statusReason, reason);
        assert.equal(down.payload.lastError.code, LOGOUT_OUTCOMES[reason].code, reason);
        const view = await status('gina');
        assert.equal(view.status, 'DISCONNECTED', reason);
        assert.equal(view.statusReason, LOGOUT_OUTCOMES[reason].statusReason, reason);
        assert.deepEqual([view.lastError.code, view.lastError.logoutReason], [LOGOUT_OUTCOMES[reason].code, reason]);
        assert.equal(view.health, null, 'a session that is not connected has no health');
        assert.equal(view.phoneNumber, `+${GINA}`, `${reason}: the account stays known`);
        assert.ok((await authStateRows('gina')) > 0, `${reason}: the credentials are kept`);
        await api('POST', '/api/sessions/gina/start');
        await connected('gina');
      }
      await target.forceLogout('gina', GINA, 'unlinked');
      const unlinked = await event('gina', 'session.logged_out', (p) => p.reason === 'UNLINKED', 'gina unlinked');
      assert.ok(unlinked.payload.detail);
      const view = await waitFor(async () => {
        const current = await status('gina');
        return current.status === 'DISCONNECTED' ? current : undefined;
      }, 10_000, 'gina DISCONNECTED after the unlink');
      assert.equal(view.statusReason, 'LOGGED_OUT');
      assert.deepEqual([view.lastError.code, view.lastError.logoutReason], ['LOGGED_OUT', 'unlinked']);
      assert.equal(view.phoneNumber, undefined);
      await waitFor(async () => (await authStateRows('gina')) === 0, 10_000, "gina's credentials cleared");
    });

    scenario('logout', async () => {
      assert.ok((await authStateRows('alice')) > 0, 'a paired session has credentials stored');
      const bobRows = await authStateRows('bob');
      await api('POST', '/api/sessions/alice/logout');
      const view = await status('alice');
      assert.equal(view.status, 'DISCONNECTED');
      assert.equal(view.statusReason, 'LOGGED_OUT');
      assert.equal(view.phoneNumber, undefined);
      await event('alice', 'session.logged_out', () => true, 'session.logged_out');
      const refused = await daemon.request('POST', '/api/messages/send', { session: 'alice', chatId: jid(BOB), type: 'text', text: 'nope' });
      assert.equal(refused.status, 409);
      assert.equal((await status('bob')).status, 'CONNECTED');
      // the credentials are gone from the database, the other session's are untouched
      assert.equal(await authStateRows('alice'), 0, 'auth_state rows left for alice after logout');
      assert.ok((await authStateRows('bob')) >= bobRows && bobRows > 0, 'bob keeps its credentials');

      // a start pairs afresh: a new QR, not a reconnect with the old credentials
      await api('POST', '/api/sessions/alice/start');
      const qr = await waitFor(async () => {
        const res = await daemon.request('GET', '/api/sessions/alice/pairing/qr');
        return res.status === 200 ? (res.body.data as { qr: string }) : undefined;
      }, 10_000, 'a new QR after logout');
      assert.ok(qr.qr.length > 10);
      const fresh = await status('alice');
      assert.equal(fresh.status, 'CONNECTING');
      assert.equal(fresh.statusReason, 'SCAN_QR');
      assert.equal(fresh.phoneNumber, undefined);
    });
  });
}

/** Runs `read` on the daemon's SQLite file opened read-only (WAL lets the daemon keep running meanwhile). */
export async function readDaemonDb<T>(dataDir: string, read: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDaemonDb(dataDir, { readonly: true, fileMustExist: true });
  try {
    return await read(db);
  } finally {
    await db.close();
  }
}

/** How many auth_state rows (credentials and signal keys) the daemon holds for `session`. */
export const countAuthState = async (dataDir: string, session: string): Promise<number> =>
  readDaemonDb(dataDir, async (db) => (await db.prepare('SELECT COUNT(*) FROM auth_state WHERE session = ?').pluck().get(session)) as number);

/** A local HTTP server answering each path of `files` with its bytes, and 404 otherwise. */
async function fileSite(files: Map<string, Buffer>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const bytes = files.get(req.url ?? '');
    if (!bytes) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length }).end(bytes);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((done) => server.close(() => done())) };
}

interface PreviewSite {
  url: string;
  /** paths requested, in order */
  hits: string[];
  close(): Promise<void>;
}

/** A local site with a page carrying og: tags and a cover image, and a 404 for everything else. */
async function previewSite(): Promise<PreviewSite> {
  const hits: string[] = [];
  const cover = png(256);
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/article') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><html><head><title>fallback</title>
        <meta property="og:title" content="A page worth reading"><meta property="og:description" content="What the page is about">
        <meta property="og:image" content="/cover.png"></head><body>${'x'.repeat(1000)}</body></html>`);
      return;
    }
    if (req.url === '/cover.png') {
      res.setHeader('content-type', 'image/png');
      res.end(cover);
      return;
    }
    res.statusCode = 404;
    res.end('not here');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, hits, close: () => new Promise<void>((done) => server.close(() => done())) };
}

interface WebhookReceiver {
  url: string;
  next(match: (body: any) => boolean, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

/** A local HTTP endpoint webhooks deliver to; answers 200. */
async function webhookReceiver(): Promise<WebhookReceiver> {
  const bodies: any[] = [];
  const drifts: Error[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const drift = checkEventAsync(body, 'webhook delivery');
        if (drift) drifts.push(drift);
        bodies.push(body);
      } catch {
        // not JSON: ignore
      }
      res.statusCode = 200;
      res.end('ok');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    next: (match, timeoutMs = 10_000) =>
      waitFor(
        () => {
          if (drifts.length) throw drifts[0];
          return bodies.find(match);
        },
        timeoutMs,
        'a webhook delivery',
      ),
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
