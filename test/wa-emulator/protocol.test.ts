// The emulator's contract with the Baileys it was written for: the installed version is the one profile.ts
// describes, and a query it does not know gets an empty result and a log line, never a hang.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';
import { ROOT } from '../helpers/daemon.js';
import { pairByQr, profile, startEmulator, trustEmulator, type TestClient, type WaEmulator } from '../support/wa-emulator/index.js';

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { version?: string; dependencies?: Record<string, string> };

describe('wa-emulator profile', () => {
  it('is written for the installed Baileys, which package.json pins exactly', () => {
    const installed = readJson(join(ROOT, 'node_modules', '@whiskeysockets', 'baileys', 'package.json')).version;
    assert.equal(installed, profile.baileysVersion, 'update test/support/wa-emulator/profile.ts (and re-check its rules) when Baileys changes');
    assert.equal(readJson(join(ROOT, 'package.json')).dependencies?.['@whiskeysockets/baileys'], profile.baileysVersion);
  });
});

describe('wa-emulator unknown queries', () => {
  let emu: WaEmulator;
  let client: TestClient;
  const logged: Array<{ message: string; data: unknown }> = [];

  before(async () => {
    emu = await startEmulator({ log: (message, data) => logged.push({ message, data }) });
    await trustEmulator(emu);
    emu.control.createAccount({ phone: '15550003333', pushName: 'Carol' });
    client = await pairByQr(emu, '15550003333');
  });

  after(async () => {
    await client?.close();
    await emu?.close();
  });

  it('answers an iq with an unknown xmlns with an empty result, and logs it', async () => {
    const id = client.sock.generateMessageTag();
    const request: BinaryNode = {
      tag: 'iq',
      attrs: { id, to: S_WHATSAPP_NET, type: 'get', xmlns: 'w:emulator-test-unknown' },
      content: [{ tag: 'mystery', attrs: { v: '1' } }],
    };
    // Baileys resolves a query that times out with undefined; a short bound makes a hang fail instead of wait
    const answer = (await client.sock.query(request, 3_000)) as BinaryNode | undefined;
    assert.ok(answer, 'no answer to the unknown iq (the emulator must never leave a query hanging)');
    assert.equal(answer.tag, 'iq');
    assert.equal(answer.attrs.type, 'result');
    assert.equal(answer.attrs.id, id);
    assert.equal(answer.content, undefined, 'the result is empty');

    const line = logged.find((l) => l.message === 'unknown iq; empty result' && (l.data as { xmlns?: string }).xmlns === 'w:emulator-test-unknown');
    assert.ok(line, `no log line for the unknown iq; logged: ${logged.map((l) => l.message).join(', ')}`);
    assert.deepEqual(line.data, { xmlns: 'w:emulator-test-unknown', type: 'get', child: 'mystery', to: S_WHATSAPP_NET });

    // and the recorder has both sides, for diffing
    const asked = emu.control.stanzas({ direction: 'in', xmlns: 'w:emulator-test-unknown' });
    assert.deepEqual(asked.map((s) => s.shape), ['iq xmlns=w:emulator-test-unknown type=get <mystery>']);
    const answered = emu.control.stanzas({ direction: 'out', tag: 'iq' }).filter((s) => s.node.attrs.id === id);
    assert.deepEqual(answered.map((s) => s.node.attrs.type), ['result']);
    // the connection still works afterwards
    assert.ok(emu.control.isOnline(client.jid));
  });
});
