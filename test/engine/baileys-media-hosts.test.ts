// End to end through the emulator: a contact's message whose media points at a host of the sender's choosing (here a
// loopback "internal" server) must not make the daemon send it any request, on download or anywhere else.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const CONTACT = '15550419001';
const PHONE = '15550419002';
const jid = (digits: string) => `${digits}@s.whatsapp.net`;

describe('baileys: media URLs chosen by the sender', () => {
  let target: BaileysTarget;
  let events: EventCollector;
  let internal: Server;
  const hits: string[] = [];
  let port = 0;

  before(async () => {
    internal = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      if (req.url?.startsWith('/redirect')) return void res.writeHead(302, { location: '/internal-admin?via=redirect' }).end();
      res.end('internal secret'.padEnd(32, '.'));
    });
    await new Promise<void>((done) => internal.listen(0, '127.0.0.1', done));
    port = (internal.address() as AddressInfo).port;
    target = await startBaileysTarget();
    target.emu.control.createAccount({ phone: CONTACT, pushName: 'Contact' });
    events = await collectEvents(target.daemon);
    await target.pairedSession('s', PHONE);
  });

  after(async () => {
    events?.close();
    await target?.close();
    await new Promise<void>((done) => internal.close(() => done()));
  });

  it('a document whose url (or directPath on that url) names an internal host: the download fails and the host gets no request', async () => {
    const documents = [
      { url: `http://127.0.0.1:${port}/redirect?from=attacker` },
      { url: `https://127.0.0.1:${port}/x` },
      { url: `https://127.0.0.1:${port}/x`, directPath: `//127.0.0.1:${port}/x` },
    ];
    for (const location of documents) {
      const { id } = await target.emu.control.send(CONTACT, jid(PHONE), {
        documentMessage: { ...location, mediaKey: randomBytes(32), mimetype: 'application/pdf', fileName: 'a.pdf', fileLength: 32 },
      });
      const got = await events.next((e) => e.session === 's' && e.event === 'message.received' && e.payload.messageId === id, 10_000, 'crafted document');
      assert.ok(got.payload.mediaId, 'the document has a media record');
      // (before the fix the daemon fetched the URL and cut the answer off mid-stream when decryption failed)
      const res = await target.daemon.request('POST', `/api/sessions/s/media/${got.payload.mediaId}/download`).catch((err: Error) => err);
      assert.deepEqual(hits, [], JSON.stringify(location));
      assert.ok(!(res instanceof Error), String(res));
      assert.equal(res.status, 502, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'NETWORK_ERROR');
    }
  });
});
