// Decryption faults and retry receipts between virtual phones and a real Baileys companion: a message encrypted to a
// pre-key the companion no longer has (recovered by the phone's re-send, or not), and a phone that cannot decrypt the
// companion's message and asks for it again (re-sent by Baileys up to its limit, from its cache or getMessage).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { closeAll, pairByQr, startEmulator, textOf, waitForMessage, type TestClient, type WaEmulator } from '../support/wa-emulator/index.js';
import { quietLibsignal } from '../engine/targets.js';

const ALICE = '15550003111';
const CAROL = '15550003999';

const isCiphertextStub = (m: WAMessage) => m.messageStubType === proto.WebMessageInfo.StubType.CIPHERTEXT;

describe('wa-emulator retry receipts and decryption faults', () => {
  let emu: WaEmulator;
  let alice: TestClient;
  /** what alice sent, served to Baileys' getMessage (as a gateway serves its store) */
  const sent = new Map<string, proto.IMessage>();

  before(async () => {
    quietLibsignal();
    emu = await startEmulator();
    emu.control.createAccount({ phone: ALICE, pushName: 'Alice' });
    emu.control.createAccount({ phone: CAROL, pushName: 'Carol' });
    alice = await pairByQr(emu, ALICE, { config: { getMessage: async (key) => sent.get(key.id ?? '') } });
  });
  after(() => closeAll(alice, emu));

  const send = async (text: string) => {
    const msg = await alice.sock.sendMessage(`${CAROL}@s.whatsapp.net`, { text });
    sent.set(msg!.key.id!, msg!.message!);
    return msg!.key.id!;
  };

  it('a message to a dropped pre-key fails with Invalid PreKey ID; the phone answers the retry receipt and it decrypts', async () => {
    const stub = waitForMessage(alice.sock, (m) => isCiphertextStub(m));
    const decrypted = waitForMessage(alice.sock, (m) => textOf(m) === 'first try fails');
    const { id } = await emu.control.sendUndecryptable(CAROL, ALICE, 'first try fails', { answerRetries: true });
    const failed = await stub;
    assert.equal(failed.key.id, id);
    assert.match(String(failed.messageStubParameters?.[0]), /Invalid PreKey ID/);
    assert.equal((await decrypted).key.id, id);
    assert.deepEqual(
      emu.control.retryLog(CAROL).filter((r) => r.id === id).map((r) => [r.kind, r.count]),
      [['answered', 1]],
    );
  });

  it('with the fault ignoring retry receipts, only the stub arrives, and the next message of that phone decrypts again', async () => {
    const stub = waitForMessage(alice.sock, (m) => isCiphertextStub(m));
    const { id } = await emu.control.sendUndecryptable(CAROL, ALICE, 'never readable', { answerRetries: false });
    assert.equal((await stub).key.id, id);
    await waitFor(() => emu.control.retryLog(CAROL).some((r) => r.id === id && r.kind === 'ignored'));
    const next = waitForMessage(alice.sock, (m) => textOf(m) === 'readable again');
    await emu.control.send(CAROL, `${ALICE}@s.whatsapp.net`, 'readable again');
    await next;
  });

  it('a phone that fails once gets the message re-sent by Baileys, and then has it', async () => {
    emu.control.failNextDecryption(CAROL, 1);
    const id = await send('asked for once');
    const got = await emu.control.waitForInbox(CAROL, (m) => m.id === id, 10_000);
    assert.equal(got.text, 'asked for once');
    assert.deepEqual(emu.control.retryLog(CAROL).filter((r) => r.id === id).map((r) => [r.kind, r.count]), [['asked', 1]]);
    await alice.waitForStatus(id, proto.WebMessageInfo.Status.DELIVERY_ACK);
  });

  it('a phone that keeps failing past the limit: Baileys re-sends twice, then stops; the phone never has it', async () => {
    emu.control.failNextDecryption(CAROL, 10);
    const id = await send('asked for too often');
    await waitFor(() => emu.control.retryLog(CAROL).filter((r) => r.id === id).length >= 3);
    // a later message arrives after any re-send Baileys would still make of the first
    const later = await send('after the exhausted one');
    await emu.control.waitForInbox(CAROL, (m) => m.id === later, 10_000);
    assert.equal(emu.control.inbox(CAROL).some((m) => m.id === id), false);
    assert.deepEqual(emu.control.retryLog(CAROL).filter((r) => r.id === id).map((r) => r.count), [1, 2, 3]);
  });

  it('a retry receipt after a reconnect (Baileys has no cached copy) is answered from getMessage', async () => {
    const id = await send('kept by the app');
    await emu.control.waitForInbox(CAROL, (m) => m.id === id, 10_000);
    await alice.reconnectAndWaitOpen();
    await emu.control.waitForOnline(alice.jid);
    emu.control.requestRetry(CAROL, id);
    await waitFor(() => emu.control.inbox(CAROL).filter((m) => m.id === id).length === 2);
    assert.equal(emu.control.inbox(CAROL).filter((m) => m.id === id)[1]!.text, 'kept by the app');
    assert.deepEqual(emu.control.phoneFailures(), []);
  });

  it('the control HTTP routes: faults, a retry request and the log; bad input is a 400', async () => {
    const post = (path: string, body: unknown) => fetch(`${emu.controlUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
    assert.equal((await post('/control/fail-decryption', { phone: CAROL, retries: 0 })).status, 400);
    assert.equal((await post('/control/send-undecryptable', { from: CAROL, to: ALICE, text: 'x' })).status, 400);
    // every placeholder from now on: one of an earlier test's messages may still come as one
    const stubIds: string[] = [];
    const onUpsert = ({ messages }: { messages: WAMessage[] }) => stubIds.push(...messages.filter(isCiphertextStub).map((m) => m.key.id ?? ''));
    alice.sock.ev.on('messages.upsert', onUpsert);
    const recovered = waitForMessage(alice.sock, (m) => textOf(m) === 'over http');
    const sentUndecryptable = await post('/control/send-undecryptable', { from: CAROL, to: ALICE, text: 'over http', answerRetries: true });
    assert.equal(sentUndecryptable.status, 200);
    const { id } = (await sentUndecryptable.json()) as { id: string };
    assert.equal((await recovered).key.id, id);
    await waitFor(() => stubIds.includes(id));
    alice.sock.ev.off('messages.upsert', onUpsert);
    const log = (await (await fetch(`${emu.controlUrl}/control/retries?phone=${CAROL}`)).json()) as Array<{ id: string; kind: string }>;
    assert.deepEqual(log.filter((r) => r.id === id).map((r) => r.kind), ['answered']);
    assert.equal((await post('/control/request-retry', { phone: CAROL, id: 'NOPE' })).status, 500);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
