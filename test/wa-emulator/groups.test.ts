// Groups through the emulator: create, messages both ways (sender keys), receipts, admin operations, invite, PN groups.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  closeAll,
  startWithAliceAndBob,
  textOf,
  waitForEvent,
  waitForMessage,
  type TestClient,
  type WaEmulator,
} from '../support/wa-emulator/index.js';

const CAROL = '15550003333';
const DAVE = '15550004444';

describe('wa-emulator groups', () => {
  let emu: WaEmulator;
  let alice: TestClient;
  let bob: TestClient;
  let groupJid = '';

  before(async () => {
    ({ emu, alice, bob } = await startWithAliceAndBob([{ phone: CAROL, pushName: 'Carol' }, { phone: DAVE, pushName: 'Dave' }]));
  });
  after(() => closeAll(alice, bob, emu));

  it('creates a group; members get groups.upsert', async () => {
    const upsert = waitForEvent(bob.sock, 'groups.upsert', (groups) => groups.some((g) => g.subject === 'Team'));
    const meta = await alice.sock.groupCreate('Team', [bob.userJid, `${CAROL}@s.whatsapp.net`]);
    groupJid = meta.id;
    assert.match(groupJid, /^\d+@g\.us$/);
    assert.equal(meta.participants.length, 3);
    assert.equal(meta.addressingMode, 'lid');
    const [atBob] = await upsert;
    assert.equal(atBob!.id, groupJid);
    assert.equal(emu.control.group(groupJid)?.participants.length, 3);
  });

  it('relays group messages both ways, to the virtual member too', async () => {
    const atBob = waitForMessage(bob.sock, (m) => m.key.remoteJid === groupJid && textOf(m) === 'hello team');
    await alice.sock.sendMessage(groupJid, { text: 'hello team' });
    const received = await atBob;
    assert.equal(received.key.participant, alice.userLid);
    assert.equal(received.key.participantAlt, alice.userJid);
    const atCarol = await emu.control.waitForInbox(CAROL, (m) => m.chat === groupJid && m.text === 'hello team');
    assert.equal(atCarol.from, alice.userJid);

    const atAlice = waitForMessage(alice.sock, (m) => m.key.remoteJid === groupJid && textOf(m) === 'hi from bob');
    await bob.sock.sendMessage(groupJid, { text: 'hi from bob' });
    assert.equal((await atAlice).key.participant, bob.userLid);

    const fromCarolAtAlice = waitForMessage(alice.sock, (m) => m.key.remoteJid === groupJid && textOf(m) === 'carol here');
    const fromCarolAtBob = waitForMessage(bob.sock, (m) => m.key.remoteJid === groupJid && textOf(m) === 'carol here');
    await emu.control.send(CAROL, groupJid, 'carol here');
    assert.equal((await fromCarolAtAlice).pushName, 'Carol');
    await fromCarolAtBob;
    assert.deepEqual(emu.control.phoneFailures(), []);
  });

  it('relays a group read receipt to the author', async () => {
    const atBob = waitForMessage(bob.sock, (m) => m.key.remoteJid === groupJid && textOf(m) === 'read me');
    const sent = await alice.sock.sendMessage(groupJid, { text: 'read me' });
    const receipt = waitForEvent(alice.sock, 'message-receipt.update', (updates) =>
      updates.some((u) => u.key.id === sent!.key.id && !!u.receipt.readTimestamp),
    );
    await bob.sock.readMessages([(await atBob).key]);
    const updates = await receipt;
    assert.ok(updates.some((u) => u.receipt.userJid === bob.userLid));
  });

  it('changes subject and description, seen by members', async () => {
    const subject = waitForEvent(bob.sock, 'groups.update', (updates) => updates.some((u) => u.id === groupJid && u.subject === 'Team 2'));
    await alice.sock.groupUpdateSubject(groupJid, 'Team 2');
    await subject;
    await alice.sock.groupUpdateDescription(groupJid, 'All about the team');
    const meta = await bob.sock.groupMetadata(groupJid);
    assert.equal(meta.subject, 'Team 2');
    assert.equal(meta.desc, 'All about the team');
  });

  it('adds, promotes, demotes and removes participants with notifications', async () => {
    const added = waitForEvent(bob.sock, 'group-participants.update', (u) => u.id === groupJid && u.action === 'add');
    const result = await alice.sock.groupParticipantsUpdate(groupJid, [`${DAVE}@s.whatsapp.net`], 'add');
    assert.deepEqual(result.map((r) => r.status), ['200']);
    assert.equal((await added).participants.length, 1);

    const promoted = waitForEvent(bob.sock, 'group-participants.update', (u) => u.id === groupJid && u.action === 'promote');
    await alice.sock.groupParticipantsUpdate(groupJid, [bob.userJid], 'promote');
    await promoted;
    assert.equal(emu.control.group(groupJid)?.participants.find((p) => p.phone === '15550002222')?.role, 'admin');
    await alice.sock.groupParticipantsUpdate(groupJid, [bob.userJid], 'demote');

    const again = await alice.sock.groupParticipantsUpdate(groupJid, [`${DAVE}@s.whatsapp.net`], 'add');
    assert.deepEqual(again.map((r) => r.status), ['409']);

    const removed = waitForEvent(bob.sock, 'group-participants.update', (u) => u.id === groupJid && u.action === 'remove');
    await alice.sock.groupParticipantsUpdate(groupJid, [`${DAVE}@s.whatsapp.net`], 'remove');
    await removed;
    assert.equal(emu.control.group(groupJid)?.participants.length, 3);
  });

  it('serves invite codes', async () => {
    const code = await alice.sock.groupInviteCode(groupJid);
    assert.ok(code);
    const info = await bob.sock.groupGetInviteInfo(code!);
    assert.equal(info.id, groupJid);
    const revoked = await alice.sock.groupRevokeInvite(groupJid);
    assert.notEqual(revoked, code);
    await assert.rejects(bob.sock.groupInviteCode(groupJid)); // not an admin
  });

  it('lists participating groups', async () => {
    const all = await bob.sock.groupFetchAllParticipating();
    assert.deepEqual(Object.keys(all), [groupJid]);
  });

  it('supports PN-addressed groups created on a phone', async () => {
    const upsert = waitForEvent(alice.sock, 'groups.upsert', (groups) => groups.some((g) => g.subject === 'Old style'));
    const group = emu.control.createGroup(CAROL, 'Old style', ['15550001111', '15550002222'], 'pn');
    await upsert;
    const atAlice = waitForMessage(alice.sock, (m) => m.key.remoteJid === group.jid && textOf(m) === 'pn group');
    await emu.control.send(CAROL, group.jid, 'pn group');
    const received = await atAlice;
    assert.equal(received.key.participant, `${CAROL}@s.whatsapp.net`);

    const atBob = waitForMessage(bob.sock, (m) => m.key.remoteJid === group.jid && textOf(m) === 'reply in pn group');
    await alice.sock.sendMessage(group.jid, { text: 'reply in pn group' });
    assert.equal((await atBob).key.participant, alice.userJid);
    await emu.control.waitForInbox(CAROL, (m) => m.text === 'reply in pn group');
  });

  it('lets a member leave', async () => {
    const left = waitForEvent(alice.sock, 'group-participants.update', (u) => u.id === groupJid && u.action === 'remove');
    await bob.sock.groupLeave(groupJid);
    await left;
    assert.equal(emu.control.group(groupJid)?.participants.some((p) => p.phone === '15550002222'), false);
  });
});
