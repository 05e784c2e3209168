// Baileys' getMessage is the gateway's store: a recipient's retry receipt that reaches a daemon started again (Baileys
// holds no copy of the message in memory any more) is answered by re-sending the stored message, which the
// recipient's phone then decrypts; the retry receipt is counted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../helpers/daemon.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const ALICE = '15550411001';
const HEIDI = '15550411002';

describe('baileys: retry receipts are answered from the message store', () => {
  let target: BaileysTarget;

  before(async () => {
    target = await startBaileysTarget();
    await target.pairedSession('alice', ALICE);
    await target.addContact(HEIDI);
  });
  after(async () => {
    await target?.close();
  });

  it('re-sends a stored message after a daemon restart when the recipient asks for it again', async () => {
    const sent = await target.daemon.request('POST', '/api/messages/send', { session: 'alice', chatId: `${HEIDI}@s.whatsapp.net`, type: 'text', text: 'kept in the store' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const id = sent.body.data.messageId as string;
    await target.emu.control.waitForInbox(HEIDI, (m) => m.id === id, 10_000);

    const daemon = await target.restartDaemon();
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/alice')).body.data.status === 'CONNECTED', 60_000, 'alice CONNECTED again');
    const device = target.emu.control.devices(ALICE)[0]!.jid;
    await target.emu.control.waitForOnline(device, 30_000);

    target.emu.control.requestRetry(HEIDI, id);
    await waitFor(async () => (target.emu.control.inbox(HEIDI).filter((m) => m.id === id).length === 2 ? true : undefined), 15_000, 'the re-sent copy decrypted by the phone');
    const copies = target.emu.control.inbox(HEIDI).filter((m) => m.id === id);
    assert.equal(copies[1]!.text, 'kept in the store');
    assert.deepEqual(target.emu.control.phoneFailures(), []);

    const decryption = (await daemon.request('GET', '/api/sessions/alice')).body.data.decryption;
    assert.equal(decryption.retryReceiptsReceived, 1);
    assert.equal(decryption.retriesExhausted.outgoing, 0);
  });
});
