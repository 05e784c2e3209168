// Baileys events and operations beyond the conformance suite, against the emulator's virtual phones: poll votes
// decrypted by the gateway, LID addressing, the account's own phone, reactions/edits/revokes from a contact,
// presence, number checks, blocklist, business labels, and the group "delete" recipe.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { aesEncryptGCM, hmacSign, proto } from '@whiskeysockets/baileys';
import { waitFor } from '../helpers/daemon.js';
import { onPostgres, openDaemonDb } from '../helpers/daemon-db.js';
import { copyDbFiles, leaks } from '../helpers/secrets.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const GATEWAY = '15550301001';
const CONTACT = '15550309009';
const jid = (digits: string) => `${digits}@s.whatsapp.net`;

/** The vote a WhatsApp client sends: the selected options' hashes, encrypted with a key derived from the poll's secret. */
function encryptVote(options: string[], ctx: { secret: Uint8Array; pollId: string; creator: string; voter: string }): proto.Message.IPollEncValue {
  const plain = proto.Message.PollVoteMessage.encode({ selectedOptions: options.map((o) => createHash('sha256').update(o).digest()) }).finish();
  const sign = Buffer.concat([Buffer.from(ctx.pollId), Buffer.from(ctx.creator), Buffer.from(ctx.voter), Buffer.from('Poll Vote'), Buffer.from([1])]);
  const key0 = hmacSign(Buffer.from(ctx.secret), new Uint8Array(32), 'sha256');
  const key = hmacSign(sign, key0, 'sha256');
  const iv = randomBytes(12);
  return { encPayload: aesEncryptGCM(plain, key, iv, Buffer.from(`${ctx.pollId}\u0000${ctx.voter}`)), encIv: iv };
}

describe('baileys events and operations', () => {
  let target: BaileysTarget;
  let events: EventCollector;
  let gatewayLid = '';

  const api = async (method: string, path: string, body?: unknown, expected = 200) => {
    const res = await target.daemon.request(method, path, body);
    assert.equal(res.status, expected, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body?.data;
  };
  const next = (type: string, match: (p: any) => boolean, what: string) =>
    events.next((e) => e.session === 'biz' && e.event === type && match(e.payload), 10_000, what).then((e) => e.payload);

  before(async () => {
    target = await startBaileysTarget();
    target.emu.control.createAccount({ phone: GATEWAY, pushName: 'Shop', business: true });
    target.emu.control.createAccount({ phone: CONTACT, pushName: 'Carol' });
    events = await collectEvents(target.daemon);
    await target.pairedSession('biz', GATEWAY);
    gatewayLid = (await api('GET', '/api/sessions/biz')).lid;
    await target.emu.control.waitForOnline(target.emu.control.devices(GATEWAY)[0]!.jid);
  });

  after(async () => {
    events?.close();
    await target?.close();
  });

  it('reports a business account as platform smba with its name', async () => {
    const view = await api('GET', '/api/sessions/biz');
    assert.equal(view.platform, 'smba');
    assert.equal(view.pushName, 'Shop');
    assert.equal(view.businessName, 'Shop');
    assert.match(gatewayLid, /^\d+@lid$/);
  });

  it('decrypts a poll vote with the stored poll secret (message.vote with option names)', async () => {
    const sent = await api('POST', '/api/messages/send', { session: 'biz', chatId: jid(CONTACT), type: 'poll', pollTitle: 'Colour?', pollOptions: ['red', 'green', 'blue'] });
    const poll = await target.emu.control.waitForInbox(CONTACT, (m) => m.id === sent.messageId);
    const secret = poll.message.messageContextInfo?.messageSecret;
    assert.ok(secret?.length, 'the poll carries its secret');
    const vote = encryptVote(['green'], { secret: secret!, pollId: sent.messageId, creator: jid(GATEWAY), voter: jid(CONTACT) });
    const { id: voteId } = await target.emu.control.send(CONTACT, jid(GATEWAY), {
      pollUpdateMessage: { pollCreationMessageKey: { remoteJid: jid(GATEWAY), fromMe: false, id: sent.messageId }, vote, senderTimestampMs: Date.now() },
    });
    const got = await next('message.vote', (p) => p.pollMessageId === sent.messageId, 'message.vote');
    assert.deepEqual(got.selectedOptions, ['green']);
    assert.equal(got.voter.phoneNumber, `+${CONTACT}`);
    assert.equal(got.chatId, jid(CONTACT));
    // a vote is not a message of its own
    assert.equal(events.all((e) => e.event === 'message.received' && e.payload.messageId === voteId).length, 0);
  });

  it("a poll's secret and a received file's media key are stored sealed, each bound to its row; both still work", async () => {
    const sent = await api('POST', '/api/messages/send', { session: 'biz', chatId: jid(CONTACT), type: 'poll', pollTitle: 'Size?', pollOptions: ['S', 'M', 'L'] });
    const poll = await target.emu.control.waitForInbox(CONTACT, (m) => m.id === sent.messageId);
    const pollSecret = Buffer.from(poll.message.messageContextInfo!.messageSecret!);
    const photo = randomBytes(4096);
    const uploaded = await target.emu.control.uploadMedia(photo, 'image');
    const { id: imageId } = await target.emu.control.send(CONTACT, jid(GATEWAY), { imageMessage: { ...uploaded, mimetype: 'image/png' } });
    const received = await next('message.received', (p) => p.messageId === imageId, 'image');
    const mediaId = received.mediaId ?? received.media?.id;
    const download = await target.daemon.request('POST', `/api/sessions/biz/media/${mediaId}/download`, {});
    assert.equal(download.status, 200, 'the media key opened from the store decrypts the file');

    const secrets = { pollSecret, pollSecretBase64: pollSecret.toString('base64'), mediaKey: uploaded.mediaKey, mediaKeyBase64: uploaded.mediaKey.toString('base64') };
    const db = await openDaemonDb(target.daemon.dataDir, { readonly: true });
    try {
      const ref = (await db.prepare('SELECT ref FROM media WHERE id = ?').pluck().get(mediaId)) as string;
      const rows = await db.prepare<{ secret: string | null; raw: string | null }>('SELECT secret, raw FROM messages WHERE id IN (?, ?)').all(sent.messageId, imageId);
      const stored = [ref, ...rows.flatMap((r) => [r.secret, r.raw])].filter((v): v is string => v !== null);
      assert.ok(stored.length >= 4, JSON.stringify(rows));
      for (const value of stored) {
        assert.match(value, /^v2:[0-9a-f]{8}:/);
        for (const secret of Object.values(secrets)) assert.ok(!value.includes(secret.toString()), 'no secret in a stored value');
      }
    } finally {
      await db.close();
    }
    if (!onPostgres()) assert.deepEqual(leaks(copyDbFiles(target.daemon.dataDir), secrets), [], 'no secret in the database files');

    // the vote decrypts with the secret read back from the store
    const vote = encryptVote(['M'], { secret: pollSecret, pollId: sent.messageId, creator: jid(GATEWAY), voter: jid(CONTACT) });
    await target.emu.control.send(CONTACT, jid(GATEWAY), {
      pollUpdateMessage: { pollCreationMessageKey: { remoteJid: jid(GATEWAY), fromMe: false, id: sent.messageId }, vote, senderTimestampMs: Date.now() },
    });
    assert.deepEqual((await next('message.vote', (p) => p.pollMessageId === sent.messageId, 'message.vote')).selectedOptions, ['M']);
  });

  it('a contact writing to the LID: the chat is the phone JID, the author carries both ids', async () => {
    const { id } = await target.emu.control.send(CONTACT, gatewayLid, 'by lid');
    const got = await next('message.received', (p) => p.messageId === id, 'LID-addressed message');
    assert.equal(got.chatId, jid(CONTACT));
    assert.equal(got.from.phoneNumber, `+${CONTACT}`);
    assert.match(got.from.lid, /@lid$/);
  });

  it('a LID-addressed group: a member learnt once (contact.identity), its messages and reactions named by both ids, the identity route answers', async () => {
    const MEMBER = '15550309011';
    target.emu.control.createAccount({ phone: MEMBER, pushName: 'Dan' });
    const group = target.emu.control.createGroup(CONTACT, 'By LID', [GATEWAY, MEMBER], 'lid');
    const memberLid = group.participants.find((p) => p.phone === MEMBER)!.lid;
    const first = await target.emu.control.send(MEMBER, group.jid, 'hello group');
    const got = await next('message.received', (p) => p.messageId === first.id, 'a group message by LID');
    assert.equal(got.chatId, group.jid);
    assert.deepEqual(got.from, { jid: jid(MEMBER), phoneNumber: `+${MEMBER}`, lid: memberLid });
    const learnt = await next('contact.identity', (p) => p.phoneNumber === `+${MEMBER}`, 'the member learnt');
    assert.equal(learnt.lid, memberLid);
    assert.equal(learnt.jid, jid(MEMBER));
    const sent = await api('POST', '/api/messages/send', { session: 'biz', chatId: group.jid, type: 'text', text: 'react here' });
    await target.emu.control.send(MEMBER, group.jid, { reactionMessage: { key: { remoteJid: group.jid, fromMe: false, id: sent.messageId, participant: gatewayLid }, text: '👍', senderTimestampMs: Date.now() } });
    const reaction = await next('message.reaction', (p) => p.messageId === sent.messageId, 'a group reaction by LID');
    assert.deepEqual(reaction.from, { jid: jid(MEMBER), phoneNumber: `+${MEMBER}`, lid: memberLid });
    const last = await target.emu.control.send(MEMBER, group.jid, 'and again');
    await next('message.received', (p) => p.messageId === last.id, 'the second group message');
    assert.equal(events.all((e) => e.session === 'biz' && e.event === 'contact.identity' && e.payload.phoneNumber === `+${MEMBER}`).length, 1, 'once per pair');
    const byLid = await waitFor(async () => {
      const res = await target.daemon.request('GET', `/api/sessions/biz/contacts/${encodeURIComponent(memberLid)}/identity`);
      return res.status === 200 ? res.body.data : undefined;
    }, 5_000, 'the member\'s identity by LID');
    assert.equal(byLid.phoneNumber, `+${MEMBER}`);
    assert.equal(byLid.source, learnt.source);
  });

  it('messages from a known contact send no contact.update that repeats what was reported (its LID mapping, its name)', async () => {
    const first = await target.emu.control.send(CONTACT, jid(GATEWAY), 'hello once');
    await next('message.received', (p) => p.messageId === first.id, 'the first message');
    const ofContact = () => events.all((e) => e.session === 'biz' && e.event === 'contact.update' && (e.payload.phoneNumber === `+${CONTACT}` || e.payload.id === jid(CONTACT)));
    let last = '';
    for (let i = 0; i < 5; i += 1) last = (await target.emu.control.send(CONTACT, jid(GATEWAY), `again ${i}`)).id;
    await next('message.received', (p) => p.messageId === last, 'the last message');
    // events arrive in order: every contact.update emitted before the last message has been collected; each one must
    // change a field of what the earlier ones said
    const reported: Record<string, string> = {};
    const updates = ofContact().map((e) => e.payload as Record<string, unknown>);
    assert.ok(updates.length > 0 && updates.length < 6, JSON.stringify(updates));
    for (const update of updates) {
      const news = Object.entries(update).filter(([field, value]) => reported[field] !== JSON.stringify(value));
      assert.ok(news.length > 0, `a contact.update that repeats what was reported: ${JSON.stringify(update)}`);
      for (const [field, value] of news) reported[field] = JSON.stringify(value);
    }
  });

  it("the account's own phone writing: message.received with fromMe", async () => {
    const { id } = await target.emu.control.send(GATEWAY, jid(CONTACT), 'sent from the phone');
    const got = await next('message.received', (p) => p.messageId === id, 'own-device message');
    assert.equal(got.fromMe, true);
    assert.equal(got.chatId, jid(CONTACT));
    assert.equal(got.text, 'sent from the phone');
  });

  it("a contact's reaction, edit and revoke arrive as message.reaction, message.edited, message.revoked", async () => {
    const { id } = await target.emu.control.send(CONTACT, jid(GATEWAY), 'original');
    await next('message.received', (p) => p.messageId === id, 'original');
    const key = { remoteJid: jid(GATEWAY), fromMe: true, id };
    const sent = await api('POST', '/api/messages/send', { session: 'biz', chatId: jid(CONTACT), type: 'text', text: 'react to me' });
    await target.emu.control.send(CONTACT, jid(GATEWAY), { reactionMessage: { key: { remoteJid: jid(GATEWAY), fromMe: false, id: sent.messageId }, text: '❤️', senderTimestampMs: Date.now() } });
    const reaction = await next('message.reaction', (p) => p.messageId === sent.messageId, 'reaction');
    assert.equal(reaction.reaction, '❤️');
    assert.equal(reaction.from.phoneNumber, `+${CONTACT}`);

    await target.emu.control.send(CONTACT, jid(GATEWAY), {
      protocolMessage: { key, type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT, editedMessage: { conversation: 'edited' }, timestampMs: Date.now() },
    });
    const edited = await next('message.edited', (p) => p.messageId === id, 'edit');
    assert.equal(edited.text, 'edited');
    await target.emu.control.send(CONTACT, jid(GATEWAY), { protocolMessage: { key, type: proto.Message.ProtocolMessage.Type.REVOKE } });
    const revoked = await next('message.revoked', (p) => p.messageId === id, 'revoke');
    assert.equal(revoked.fromMe, false);
  });

  it('presence and typing of a subscribed contact', async () => {
    await api('POST', `/api/sessions/biz/presence/${encodeURIComponent(jid(CONTACT))}/subscribe`);
    target.emu.control.setPresence(CONTACT, 'available');
    await next('presence.update', (p) => p.from.phoneNumber === `+${CONTACT}` && p.presence === 'available', 'available');
    target.emu.control.sendChatState(CONTACT, jid(GATEWAY), 'recording');
    const recording = await next('presence.update', (p) => p.from.phoneNumber === `+${CONTACT}` && p.presence === 'recording', 'recording');
    assert.equal(recording.media, 'audio');
    const stored = await api('GET', `/api/sessions/biz/presence/${encodeURIComponent(jid(CONTACT))}`);
    assert.equal(stored.chatId, jid(CONTACT));
  });

  it('checks numbers (registered ones with their LID) and blocks a contact', async () => {
    const checks = await api('POST', '/api/sessions/biz/contacts/check', { phoneNumbers: [`+${CONTACT}`, '+15550300000'] });
    assert.deepEqual(
      checks.map((c: { phoneNumber: string; registered: boolean }) => [c.phoneNumber, c.registered]),
      [
        [`+${CONTACT}`, true],
        ['+15550300000', false],
      ],
    );
    assert.match(checks[0].lid, /@lid$/);
    await api('POST', `/api/sessions/biz/contacts/${encodeURIComponent(jid(CONTACT))}/block`);
    const blocked = await next('blocklist.update', (p) => p.action === 'blocked', 'blocklist.update');
    assert.deepEqual(blocked.jids, [jid(CONTACT)]);
    await api('DELETE', `/api/sessions/biz/contacts/${encodeURIComponent(jid(CONTACT))}/block`);
    await next('blocklist.update', (p) => p.action === 'unblocked', 'unblocked');
  });

  it('labels on a business account: created and assigned through app-state patches', async () => {
    const label = await api('POST', '/api/sessions/biz/labels', { name: 'VIP', color: 3 }, 201);
    const saved = await next('labels.update', (p) => p.label?.id === label.id, 'labels.update');
    assert.equal(saved.label.name, 'VIP');
    await api('POST', `/api/sessions/biz/labels/${label.id}/chats`, { chatIds: [jid(CONTACT)] });
    await next('labels.update', (p) => p.action === 'assigned' && p.labelId === label.id, 'label assigned');
  });

  it('deletes a group the way the apps do: invite revoked, members removed, then left', async () => {
    const group = await api('POST', '/api/sessions/biz/groups', { session: 'biz', name: 'Temporary', participants: [`+${CONTACT}`] }, 201);
    const code = (await api('GET', `/api/sessions/biz/groups/${encodeURIComponent(group.id)}/invite`)).code;
    await api('DELETE', `/api/sessions/biz/groups/${encodeURIComponent(group.id)}`);
    await waitFor(() => target.emu.control.group(group.id)?.participants.length === 0, 5_000, 'an empty group');
    const preview = await target.daemon.request('GET', `/api/sessions/biz/groups/join?inviteCode=${encodeURIComponent(code)}`);
    assert.equal(preview.status, 404, JSON.stringify(preview.body));
    assert.equal(preview.body.error.code, 'INVITE_NOT_FOUND');
    const gone = await target.daemon.request('GET', `/api/sessions/biz/groups/${encodeURIComponent(group.id)}`);
    assert.ok([403, 404].includes(gone.status), JSON.stringify(gone.body));
  });

  it('answers unknown groups with 404, not a network error', async () => {
    const unknown = encodeURIComponent('120363999999999999@g.us');
    const sent = await target.daemon.request('POST', '/api/messages/send', { session: 'biz', chatId: '120363999999999999@g.us', type: 'text', text: 'anyone?' });
    assert.equal(sent.status, 404, JSON.stringify(sent.body));
    assert.equal(sent.body.error.code, 'GROUP_NOT_FOUND');
    const got = await target.daemon.request('GET', `/api/sessions/biz/groups/${unknown}`);
    assert.equal(got.status, 404, JSON.stringify(got.body));
    const join = await target.daemon.request('GET', '/api/sessions/biz/groups/join?inviteCode=NOPE1234');
    assert.equal(join.status, 404, JSON.stringify(join.body));
  });

  it('posts a status to the named viewers: the contact\'s phone decrypts it from status@broadcast', async () => {
    const seen = target.emu.control.waitForInbox(CONTACT, (m) => m.chat === 'status@broadcast' && m.text === 'story', 15_000);
    const res = await target.daemon.request('POST', '/api/messages/send', { session: 'biz', chatId: 'status@broadcast', type: 'text', text: 'story', statusViewers: [`+${CONTACT}`] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.statusViewers, 1);
    assert.equal((await seen).from, `${GATEWAY}@s.whatsapp.net`);
  });
});
