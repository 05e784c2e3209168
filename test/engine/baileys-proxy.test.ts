// A session's proxy carries all of its traffic: the WebSocket, media uploads and media downloads, for HTTP (CONNECT)
// and SOCKS5 proxies. The proxies here are minimal tunnels that record where they connected to.
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { png } from './samples.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const CONTACT = '15550409009';
const jid = (digits: string) => `${digits}@s.whatsapp.net`;

interface TestProxy {
  url: string;
  /** host:port of every tunnel opened */
  tunnels: string[];
  close(): Promise<void>;
}

function pipeBoth(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
}

/** An HTTP proxy that only does CONNECT. */
async function httpConnectProxy(): Promise<TestProxy> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const server = createHttpServer((_req, res) => {
    res.statusCode = 405;
    res.end();
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const [host, port] = (req.url ?? '').split(':');
    tunnels.push(`${host}:${port}`);
    const upstream = connect(Number(port), host!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      pipeBoth(client, upstream);
    });
    upstream.on('error', () => client.destroy());
    sockets.add(client).add(upstream);
  });
  return listen(server, 'http', tunnels, sockets);
}

/** A SOCKS5 proxy: no authentication, CONNECT only, IPv4 and domain addresses. */
async function socks5Proxy(): Promise<TestProxy> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.once('data', () => {
      client.write(Buffer.from([5, 0]));
      client.once('data', (req: Buffer) => {
        const type = req[3];
        let host: string;
        let offset: number;
        if (type === 1) {
          host = [...req.subarray(4, 8)].join('.');
          offset = 8;
        } else {
          const length = req[4]!;
          host = req.subarray(5, 5 + length).toString('latin1');
          offset = 5 + length;
        }
        const port = req.readUInt16BE(offset);
        tunnels.push(`${host}:${port}`);
        const upstream = connect(port, host, () => {
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          pipeBoth(client, upstream);
        });
        sockets.add(upstream);
        upstream.on('error', () => client.destroy());
      });
    });
    client.on('error', () => undefined);
  });
  return listen(server, 'socks5', tunnels, sockets);
}

async function listen(server: Server, scheme: string, tunnels: string[], sockets: Set<Socket>): Promise<TestProxy> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    tunnels,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

describe('baileys: session proxies', () => {
  let target: BaileysTarget;
  let events: EventCollector;
  const proxies: TestProxy[] = [];

  before(async () => {
    target = await startBaileysTarget();
    target.emu.control.createAccount({ phone: CONTACT, pushName: 'Contact' });
    events = await collectEvents(target.daemon);
  });

  after(async () => {
    events?.close();
    await target?.close();
    for (const proxy of proxies) await proxy.close();
  });

  const cases: Array<[string, () => Promise<TestProxy>, string]> = [
    ['http', httpConnectProxy, '15550401001'],
    ['socks5', socks5Proxy, '15550402002'],
  ];
  for (const [kind, start, phone] of cases) {
    it(`${kind}: the WebSocket, a media upload and a media download all go through the proxy`, async () => {
      const proxy = await start();
      proxies.push(proxy);
      const session = `via-${kind}`;
      const created = await target.daemon.request('POST', '/api/sessions', { name: session, start: true, engine: 'baileys', proxy: proxy.url });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const qr = await waitFor(async () => {
        const res = await target.daemon.request('GET', `/api/sessions/${session}/pairing/qr`);
        return res.status === 200 ? (res.body.data.qr as string) : undefined;
      }, 10_000, 'QR');
      await target.emu.control.scanQr(qr, phone);
      await waitFor(async () => (await target.daemon.request('GET', `/api/sessions/${session}`)).body.data.status === 'CONNECTED', 10_000, 'CONNECTED');
      const wsPort = new URL(target.emu.wsUrl).port;
      assert.ok(proxy.tunnels.some((t) => t.endsWith(`:${wsPort}`)), `websocket tunnel in ${proxy.tunnels}`);

      // upload: the session sends an image
      const image = png(20);
      const sent = await target.daemon.request('POST', '/api/messages/send', { session, chatId: jid(CONTACT), type: 'image', base64: image.toString('base64') });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const atContact = await target.emu.control.waitForInbox(CONTACT, (m) => m.id === sent.body.data.messageId);
      const mediaPort = target.emu.mediaHost.split(':')[1]!;
      const uploads = proxy.tunnels.filter((t) => t.endsWith(`:${mediaPort}`)).length;
      assert.ok(uploads >= 1, `media upload tunnel in ${proxy.tunnels}`);

      // download: the contact sends the same media back; the session downloads it through the proxy
      const { id } = await target.emu.control.send(CONTACT, jid(phone), { imageMessage: atContact.message.imageMessage });
      const got = await events.next((e) => e.session === session && e.event === 'message.received' && e.payload.messageId === id, 10_000, 'image back');
      const res = await fetch(`${target.daemon.url}/api/sessions/${session}/media/${got.payload.mediaId}/download`, { method: 'POST', headers: { Authorization: `Bearer ${target.daemon.masterKey}` } });
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(image));
      assert.ok(proxy.tunnels.filter((t) => t.endsWith(`:${mediaPort}`)).length > uploads, `media download tunnel in ${proxy.tunnels}`);
    });
  }
});
