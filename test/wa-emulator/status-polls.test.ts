// Status posts and poll votes through the emulator: a status reaches the viewers named in statusJidList (a companion
// and a virtual phone), from status@broadcast with its author; a vote built by the gateway's builder decrypts on the
// virtual phone that created the poll.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decryptPollVote, proto } from '@whiskeysockets/baileys';
import { pollVoteMessage } from '../../src/engine/baileys/polls.js';
import { pairByQr, startEmulator, textOf, trustEmulator, waitForMessage, type TestClient, type WaEmulator } from '../support/wa-emulator/index.js';
import { quietLibsignal } from '../engine/targets.js';

const ALICE = '15550601111';
const BOB = '15550602222';
const CAROL = '15550603333';
const pn = (digits: string) => `${digits}@s.whatsapp.net`;

describe('wa-emulator status posts and poll votes', () => {
  let emu: WaEmulator;
  let alice: TestClient;
  let bob: TestClient;

  before(async () => {
    quietLibsignal();
    emu = await startEmulator();
    await trustEmulator(emu);
    emu.control.createAccount({ phone: ALICE, pushName: 'Alice' });
    emu.control.createAccount({ phone: BOB, pushName: 'Bob' });
    emu.control.createAccount({ phone: CAROL, pushName: 'Carol' });
    alice = await pairByQr(emu, ALICE);
    bob = await pairByQr(emu, BOB);
  });

  after(async () => {
    await alice?.close();
    await bob?.close();
    await emu?.close();
  });

  it('a status post reaches exactly the viewers of statusJidList, from status@broadcast with its author', async () => {
    const atBob = waitForMessage(bob.sock, (m) => m.key.remoteJid === 'status@broadcast' && textOf(m) === 'my status');
    const atCarol = emu.control.waitForInbox(CAROL, (m) => m.text === 'my status');
    const sent = await alice.sock.sendMessage('status@broadcast', { text: 'my status' }, { statusJidList: [pn(BOB), pn(CAROL)] });
    const got = await atBob;
    assert.equal(got.key.id, sent?.key.id);
    assert.equal(got.key.fromMe, false);
    // the author, LID-addressed (Baileys keeps participantAlt for groups only; the stanza's participant_pn teaches the pair)
    assert.equal(got.key.participant?.replace(/:\d+@/, '@'), emu.control.account(ALICE)!.lid);
    const phone = await atCarol;
    assert.equal(phone.chat, 'status@broadcast');
    assert.equal(phone.from, pn(ALICE));
    assert.deepEqual(emu.control.phoneFailures(), []);
  });

  it('a status post does not reach a phone left out of statusJidList', async () => {
    const sent = await alice.sock.sendMessage('status@broadcast', { text: 'only bob' }, { statusJidList: [pn(BOB)] });
    await waitForMessage(bob.sock, (m) => m.key.id === sent?.key.id);
    assert.equal(emu.control.inbox(CAROL).some((m) => m.id === sent?.key.id), false);
  });

  it('a vote built by the gateway decrypts on the phone that created the poll', async () => {
    const secret = randomBytes(32);
    const poll: proto.IMessage = {
      pollCreationMessage: { name: 'Lunch?', options: [{ optionName: 'pizza' }, { optionName: 'salad' }], selectableOptionsCount: 0 },
      messageContextInfo: { messageSecret: secret },
    };
    const atAlice = waitForMessage(alice.sock, (m) => !!m.message?.pollCreationMessage);
    const { id: pollId } = await emu.control.send(CAROL, pn(ALICE), poll);
    const received = await atAlice;
    assert.equal(received.key.id, pollId);

    const vote = pollVoteMessage({ key: received.key, secret, creator: pn(CAROL), voter: pn(ALICE), selectedOptions: ['salad'], timestampMs: Date.now() });
    const atCarol = emu.control.waitForInbox(CAROL, (m) => !!m.message.pollUpdateMessage);
    await alice.sock.relayMessage(pn(CAROL), vote, {});
    const update = (await atCarol).message.pollUpdateMessage!;
    assert.equal(update.pollCreationMessageKey?.id, pollId);
    const decrypted = decryptPollVote(update.vote!, { pollEncKey: secret, pollMsgId: pollId, pollCreatorJid: pn(CAROL), voterJid: pn(ALICE) });
    assert.deepEqual(decrypted.selectedOptions?.map((h) => Buffer.from(h).toString('hex')), [createHash('sha256').update('salad').digest('hex')]);
    // another secret does not open it: the check above is real
    assert.throws(() => decryptPollVote(update.vote!, { pollEncKey: randomBytes(32), pollMsgId: pollId, pollCreatorJid: pn(CAROL), voterJid: pn(ALICE) }));
  });
});
