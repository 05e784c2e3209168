// Calls: a contact's phone offers a call to an account; real Baileys reports it (and acks it), sees it end by timeout
// or by its caller hanging up, and its rejectCall reaches the caller (the server acks the reject, so the query resolves).
import assert from 'node:assert/strict';
import type { BaileysEventMap } from '@whiskeysockets/baileys';
import { after, before, describe, it } from 'node:test';
import { closeAll, startWithAliceAndBob, type TestClient, type WaEmulator } from '../support/wa-emulator/index.js';

type WACall = BaileysEventMap['call'][number];
const CAROL = '15550007777';

describe('wa-emulator calls', () => {
  let emu: WaEmulator;
  let alice: TestClient;
  let bob: TestClient;
  const seen: WACall[] = [];

  before(async () => {
    ({ emu, alice, bob } = await startWithAliceAndBob([{ phone: CAROL, pushName: 'Carol' }]));
    alice.sock.ev.on('call', (calls) => seen.push(...calls));
  });
  after(() => closeAll(alice, bob, emu));

  const callUpdate = async (callId: string, status: string, timeoutMs = 5_000): Promise<WACall> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const call = seen.find((c) => c.id === callId && c.status === status);
      if (call) return call;
      if (Date.now() > deadline) throw new Error(`no ${status} of call ${callId}; saw ${seen.filter((c) => c.id === callId).map((c) => c.status).join(',') || 'nothing'}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it('offers a call by LID with caller_pn; Baileys reports it and acks the call stanza', async () => {
    const { callId } = emu.control.placeCall(CAROL, '15550001111', { isVideo: true });
    const offer = await callUpdate(callId, 'offer');
    const carol = emu.control.account(CAROL)!;
    assert.equal(offer.from, carol.lid);
    assert.equal(offer.callerPn, carol.jid);
    assert.equal(offer.chatId, carol.lid);
    assert.equal(offer.isVideo, true);
    assert.equal(offer.isGroup, false);
    // Baileys acks the call node: the server holds it no more
    const stanzaId = emu.control.stanzas({ direction: 'out', tag: 'call', device: alice.jid }).at(-1)?.node.attrs.id;
    assert.ok(stanzaId);
    const deadline = Date.now() + 5_000;
    while (!emu.control.confirmations(alice.jid).some((c) => c.tag === 'call' && c.id === stanzaId)) {
      if (Date.now() > deadline) throw new Error('the call stanza was not acked');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // a call nobody answers rings out
    emu.control.endCall(callId, 'timeout');
    await callUpdate(callId, 'timeout');
    assert.equal(emu.control.call(callId)?.status, 'timeout');
  });

  it('a caller hanging up is a bare terminate; a phone-addressed offer names the caller by phone', async () => {
    const { callId } = emu.control.placeCall(CAROL, '15550001111', { addressing: 'pn' });
    const offer = await callUpdate(callId, 'offer');
    assert.equal(offer.from, `${CAROL}@s.whatsapp.net`);
    assert.equal(offer.isVideo, false);
    emu.control.endCall(callId, 'cancelled');
    await callUpdate(callId, 'terminate');
  });

  it("rejectCall reaches the caller: the reject stanza is recorded and acked (Baileys' query resolves)", async () => {
    const { callId } = emu.control.placeCall(CAROL, '15550001111');
    const offer = await callUpdate(callId, 'offer');
    await alice.sock.rejectCall(callId, offer.from);
    const rejected = await emu.control.waitForCallRejected(callId, 1_000);
    assert.equal(rejected.status, 'rejected');
    assert.equal(rejected.rejectedBy, alice.jid);
    assert.deepEqual(rejected.reject, { to: emu.control.account(CAROL)!.lid, callCreator: emu.control.account(CAROL)!.lid, count: '0' });
    // a reject of a call that is over changes nothing
    assert.throws(() => emu.control.endCall(callId, 'timeout'), /is rejected/);
    await alice.sock.rejectCall(callId, offer.from);
    assert.equal(emu.control.call(callId)?.rejectedBy, alice.jid);
  });

  it('a call to an offline companion waits in its queue', async () => {
    await bob.close();
    const { callId } = emu.control.placeCall(CAROL, '15550002222');
    assert.equal(emu.control.offlineQueue(bob.jid) >= 1, true);
    const sock = await bob.reconnect();
    const offline = await new Promise<WACall>((resolve) => sock.ev.on('call', (calls) => calls.forEach((c) => c.id === callId && resolve(c))));
    assert.equal(offline.offline, true);
    assert.equal(offline.status, 'offer');
  });

  it('the HTTP control API places, ends and reads calls, and refuses bad input', async () => {
    const post = (path: string, body: unknown) => fetch(`${emu.controlUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const placed = await post('/control/call', { from: CAROL, to: '15550001111', isVideo: true, addressing: 'pn' });
    assert.equal(placed.status, 200);
    const { callId } = (await placed.json()) as { callId: string };
    await callUpdate(callId, 'offer');
    const ended = await post('/control/call-end', { callId, how: 'cancelled' });
    assert.equal(((await ended.json()) as { status: string }).status, 'cancelled');
    await callUpdate(callId, 'terminate');
    const read = await fetch(`${emu.controlUrl}/control/call?id=${callId}`);
    assert.deepEqual((({ status, isVideo, addressing }) => ({ status, isVideo, addressing }))((await read.json()) as { status: string; isVideo: boolean; addressing: string }), { status: 'cancelled', isVideo: true, addressing: 'pn' });
    assert.equal((await fetch(`${emu.controlUrl}/control/call?id=nope`)).status, 404);
    assert.equal((await post('/control/call', { from: CAROL, to: '15550001111', addressing: 'x' })).status, 400);
    assert.equal((await post('/control/call-end', { callId, how: 'later' })).status, 400);
    assert.equal((await post('/control/call-end', { callId })).status, 500, 'a call that is over cannot end again');
  });
});
