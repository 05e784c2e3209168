// Session proxies go through the URL policy: refused at create time (end to end), and checked again at every
// connection the engine makes to the proxy (the guarded lookup the Baileys proxy agents and dispatcher use).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, get, type Agent, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { request } from 'undici';
import { proxyRoute } from '../../src/engine/baileys/proxy.js';
import { checkProxyUrl, type Resolver } from '../../src/net/url-guard.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const STRICT = { allowPrivateTargets: false };
const LOCAL = { allowPrivateTargets: true };

const REFUSED = [
  'http://169.254.169.254:80',
  'http://[fd00::1]:3128',
  'http://[::ffff:127.0.0.1]:3128',
  'socks5://127.0.0.1:1080',
  'socks5h://10.1.2.3:1080',
  'https://user:pass@localhost:8443',
  'http://metadata.google.internal',
  'http://proxy:3128',
  'http://100.64.0.1:3128',
  'http://0.0.0.0:3128',
];

describe('create time', () => {
  let daemon: TestDaemon;
  before(async () => {
    daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'false' } });
  });
  after(() => daemon.cleanup());

  test('a proxy on a link-local, private, loopback or internal host is 400 PROXY_URL_REJECTED naming /proxy', async () => {
    let n = 0;
    for (const proxy of REFUSED) {
      const res = await daemon.request('POST', '/api/sessions', { name: `p${n++}`, engine: 'baileys', proxy });
      assert.equal(res.status, 400, `${proxy}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'PROXY_URL_REJECTED', proxy);
      assert.equal(res.body.error.details[0].path, '/proxy');
    }
    const list = await daemon.request('GET', '/api/sessions');
    assert.deepEqual(list.body.data, [], 'no session was created');
  });

  test('a public proxy host is accepted, with credentials', async () => {
    const res = await daemon.request('POST', '/api/sessions', { name: 'public', engine: 'baileys', proxy: 'socks5://user:secret@proxy.example.com:1080' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.data.proxy, 'socks5://user:***@proxy.example.com:1080');
  });
});

describe('checkProxyUrl', () => {
  test('refuses non-public hosts unless private targets are allowed; refuses non-proxy schemes always', () => {
    for (const proxy of REFUSED) {
      assert.throws(() => checkProxyUrl(proxy, STRICT), (err: { code?: string }) => err.code === 'PROXY_URL_REJECTED', proxy);
      assert.equal(checkProxyUrl(proxy, LOCAL).href, new URL(proxy).href);
    }
    for (const proxy of ['ftp://proxy.example.com', 'socks4://proxy.example.com:1080', 'not a url', 'http://']) {
      assert.throws(() => checkProxyUrl(proxy, LOCAL), (err: { code?: string }) => err.code === 'PROXY_URL_REJECTED', proxy);
    }
  });
});

describe('connect time', () => {
  let target: Server;
  let proxy: Server;
  let targetPort: number;
  let proxyPort: number;
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();

  before(async () => {
    target = createServer((_req, res) => res.end('through'));
    await new Promise<void>((done) => target.listen(0, '127.0.0.1', done));
    targetPort = (target.address() as AddressInfo).port;
    proxy = createServer();
    proxy.on('connect', (req, client: Socket) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client).pipe(upstream);
      });
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => sockets.delete(s));
      }
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    proxyPort = (proxy.address() as AddressInfo).port;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((done) => proxy.close(done));
    await new Promise((done) => target.close(done));
  });

  /** a public-looking proxy name that resolves to loopback: what DNS rebinding would do */
  const rebinding: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
  const viaAgent = (agent: Agent) =>
    new Promise<string>((done, fail) => {
      get({ host: '127.0.0.1', port: targetPort, path: '/', agent }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => done(body));
      }).on('error', fail);
    });

  test('a literal non-public proxy address is refused before any connection', () => {
    assert.throws(() => proxyRoute(`http://127.0.0.1:${proxyPort}`, STRICT), (err: { code?: string }) => err.code === 'PROXY_URL_REJECTED');
    assert.throws(() => proxyRoute('socks5://169.254.169.254:1080', STRICT), (err: { code?: string }) => err.code === 'PROXY_URL_REJECTED');
  });

  test('a proxy name resolving to a non-public address is refused by the WebSocket agent and the fetch dispatcher', async () => {
    for (const scheme of ['http', 'socks5']) {
      const route = proxyRoute(`${scheme}://proxy.example.com:${proxyPort}`, STRICT, rebinding);
      try {
        await assert.rejects(viaAgent(route.agent as Agent), /blocked address/, `${scheme} agent`);
        await assert.rejects(
          request(`http://127.0.0.1:${targetPort}/`, { dispatcher: route.dispatcher }).then((r) => r.body.text()),
          (err: Error) => /blocked address/.test(`${err.message} ${String((err as { cause?: Error }).cause?.message)}`),
          `${scheme} dispatcher`,
        );
      } finally {
        await route.close();
      }
    }
    assert.deepEqual(tunnels, [], 'nothing reached the proxy');
  });

  test('with private targets allowed, the same name connects through the checked address', async () => {
    const route = proxyRoute(`http://proxy.example.com:${proxyPort}`, LOCAL, rebinding);
    try {
      assert.equal(await viaAgent(route.agent as Agent), 'through');
      const res = await request(`http://127.0.0.1:${targetPort}/`, { dispatcher: route.dispatcher });
      assert.equal(await res.body.text(), 'through');
    } finally {
      await route.close();
    }
    assert.equal(tunnels.length, 2);
  });
});
