// The HTTP control API, driving an unmodified Baileys app in a child process configured only through daemonEnv().
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { pairByQr, startEmulator, trustEmulator, waitForMessage, textOf, type TestClient, type WaEmulator } from '../support/wa-emulator/index.js';

const ECHO_CLIENT = fileURLToPath(new URL('../support/wa-emulator/echo-client.js', import.meta.url));
const GATEWAY = '15557770000';
const CONTACT = '15558880000';

/** Lines a child prints, with a way to wait for the next one matching a pattern. */
function lineReader(child: ChildProcess) {
  const seen: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    seen.push(line);
    const i = waiters.findIndex((w) => w.pattern.test(line));
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(line);
  });
  return {
    seen,
    next(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`child printed no line matching ${pattern} in ${timeoutMs} ms; got:\n${seen.join('\n')}`)), timeoutMs);
        waiters.push({ pattern, resolve: (line) => (clearTimeout(timer), resolve(line)) });
      });
    },
  };
}

describe('wa-emulator HTTP control API with a child-process client', () => {
  let emu: WaEmulator;
  let dir: string;
  let child: ChildProcess | undefined;
  let lines: ReturnType<typeof lineReader>;
  let peer: TestClient | undefined;
  let stderr = '';
  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${emu.controlUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    return { status: res.status, body: await res.json() };
  };

  before(async () => {
    emu = await startEmulator();
    dir = mkdtempSync(join(tmpdir(), 'wa-emulator-'));
  });

  after(async () => {
    child?.kill('SIGKILL');
    await peer?.close();
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('describes itself and manages accounts', async () => {
    const info = await api('GET', '/control/info');
    assert.equal(info.status, 200);
    assert.equal(info.body.wsUrl, emu.wsUrl);
    assert.equal(info.body.caPublicKeyHex, emu.caPublicKey.toString('hex'));
    assert.equal((await api('POST', '/control/accounts', { phone: GATEWAY, pushName: 'Gateway', business: true })).status, 200);
    assert.equal((await api('POST', '/control/accounts', { phone: CONTACT, pushName: 'Contact' })).status, 200);
    const accounts = await api('GET', '/control/accounts');
    assert.deepEqual(accounts.body.map((a: { phone: string }) => a.phone).sort(), [GATEWAY, CONTACT]);
    assert.equal((await api('POST', '/control/accounts', { phone: GATEWAY })).status, 500);
    assert.equal((await api('POST', '/control/accounts', {})).status, 400);
    assert.equal((await api('GET', '/control/nope')).status, 404);
  });

  it('pairs a child process (preload + NODE_EXTRA_CA_CERTS only) by QR over HTTP', async () => {
    const env = emu.daemonEnv(dir);
    child = spawn(process.execPath, [ECHO_CLIENT], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    lines = lineReader(child);
    const qr = (await lines.next(/^QR /)).slice(3);
    const scanned = await api('POST', '/control/scan', { qr, phone: GATEWAY });
    assert.equal(scanned.status, 200, JSON.stringify(scanned.body) + stderr);
    assert.equal(scanned.body.jid, `${GATEWAY}:1@s.whatsapp.net`);
    await lines.next(/^CLOSE 515$/);
    await lines.next(/^OPEN /);
    assert.deepEqual((await api('POST', '/control/wait-online', { jid: scanned.body.jid })).body, { online: true });
  });

  it('sends as a contact and reads what the contact received', async () => {
    const sent = await api('POST', '/control/send', { from: CONTACT, to: GATEWAY, text: 'ping' });
    assert.equal(sent.status, 200);
    assert.deepEqual(sent.body.devices, [`${GATEWAY}:1@s.whatsapp.net`]);
    await lines.next(/^RECV ping$/);
    const echoed = await api('POST', '/control/wait-inbox', { phone: CONTACT, text: 'echo: ping' });
    assert.equal(echoed.status, 200, JSON.stringify(echoed.body));
    assert.equal(echoed.body.from, `${GATEWAY}@s.whatsapp.net`);
    const inbox = await api('GET', `/control/inbox?phone=${CONTACT}`);
    assert.equal(inbox.body.length, 1);
    assert.equal(inbox.body[0].text, 'echo: ping');
    assert.equal(inbox.body[0].message.extendedTextMessage.text, 'echo: ping');
  });

  it('lets the child download media from the HTTPS media host', async () => {
    await trustEmulator(emu);
    peer = await pairByQr(emu, '15559990000');
    const image = createHash('sha512').update('not really an image').digest();
    const reply = waitForMessage(peer.sock, (m) => textOf(m)?.startsWith('got image') === true);
    await peer.sock.sendMessage(`${GATEWAY}@s.whatsapp.net`, { image, mimetype: 'image/jpeg', jpegThumbnail: '' });
    const sha = createHash('sha256').update(image).digest('hex');
    await lines.next(new RegExp(`^MEDIA ${sha}$`));
    assert.equal(textOf(await reply), `got image ${sha}`);
  });

  it('drops the connection with a chosen code, logs the child out for a reason (also when silent), then the phone unlinks it (401)', async () => {
    const jid = `${GATEWAY}:1@s.whatsapp.net`;
    assert.equal((await api('POST', '/control/drop', { jid, code: 599 })).status, 400);
    assert.deepEqual((await api('POST', '/control/drop', { jid, code: 503 })).body, { dropped: true });
    await lines.next(/^CLOSE 503$/);
    await lines.next(/^OPEN /);
    await api('POST', '/control/wait-online', { jid });
    // a forced logout with the server's stanza: a temporary ban is <failure reason="402">, which Baileys reports as 402
    assert.equal((await api('POST', '/control/logout', { jid, reason: 'expelled' })).status, 400);
    assert.deepEqual((await api('POST', '/control/logout', { jid, reason: 'temporarily_banned' })).body, { loggedOut: true });
    await lines.next(/^CLOSE 402$/);
    await lines.next(/^OPEN /);
    await api('POST', '/control/wait-online', { jid });
    assert.equal((await api('POST', '/control/silence', { jid, connections: 0 })).status, 400);
    assert.deepEqual((await api('POST', '/control/silence', { jid, connections: 1 })).body, { silenced: true });
    // a silent connection still gets the server's last word
    assert.deepEqual((await api('POST', '/control/logout', { jid, reason: 'replaced' })).body, { loggedOut: true });
    await lines.next(/^CLOSE 440$/);
    await lines.next(/^OPEN /);
    await api('POST', '/control/wait-online', { jid });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    assert.equal((await api('POST', '/control/unlink', { jid })).status, 200);
    await lines.next(/^CLOSE 401$/);
    assert.equal(await exited, 0);
    child = undefined;
    assert.equal((await api('GET', `/control/devices?phone=${GATEWAY}`)).body.length, 0);
  });

  it('serves the recorded stanzas and shapes', async () => {
    const stanzas = await api('GET', `/control/stanzas?direction=in&device=${GATEWAY}:1@s.whatsapp.net&tag=message`);
    assert.ok(stanzas.body.length >= 2);
    const shapes = await api('GET', '/control/shapes?direction=in');
    assert.ok(shapes.body.includes('iq xmlns=passive type=set <active>'));
  });
});
