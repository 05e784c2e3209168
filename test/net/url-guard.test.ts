// Tests for src/net/url-guard.ts: every refused and allowed URL form, and the connect-time guarded dispatcher.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { GatewayError } from '../../src/errors.js';
import { postDelivery } from '../../src/webhooks/http-delivery.js';
import {
  checkTargetUrl,
  defaultResolver,
  isBlockedAddress,
  isInternalHostname,
  type Resolver,
} from '../../src/net/url-guard.js';
import { createGuardedDispatcher } from '../../src/net/guarded-dispatcher.js';

const STRICT = { allowPrivateTargets: false };
const LOCAL = { allowPrivateTargets: true };

function assertRejected(raw: string, policy: { allowPrivateTargets: boolean }, pattern?: RegExp, code: 'WEBHOOK_URL_REJECTED' | 'MEDIA_URL_REJECTED' = 'WEBHOOK_URL_REJECTED'): void {
  assert.throws(
    () => checkTargetUrl(raw, policy, code),
    (err: unknown) => {
      assert.ok(err instanceof GatewayError, `expected GatewayError for ${raw}`);
      assert.equal(err.code, code);
      assert.equal(err.details?.length, 1);
      assert.equal(err.details?.[0]?.path, '/url');
      assert.ok((err.details?.[0]?.message ?? '').length > 0);
      assert.match(err.message, code === 'WEBHOOK_URL_REJECTED' ? /^Webhook URL rejected: / : /^Media URL rejected: /);
      if (pattern) assert.match(err.message, pattern, `message for ${raw}: ${err.message}`);
      return true;
    },
    `expected ${raw} to be rejected`,
  );
}

describe('checkTargetUrl refuses (allowPrivateTargets false)', () => {
  test('strings that are not absolute URLs', () => {
    for (const raw of ['', '   ', 'not a url', 'example.com/hook', '//example.com/hook', '/relative', 'https://', 'https://ex ample.com/', 'https://example.com:99999/', 'https://[::1/']) {
      assertRejected(raw, STRICT);
    }
  });

  test('schemes other than https, including http', () => {
    assertRejected('http://example.com/hook', STRICT, /must use https/);
    for (const raw of ['ftp://example.com/x', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/plain,hi', 'gopher://example.com/', 'ws://example.com/', 'wss://example.com/', 'mailto:a@example.com']) {
      assertRejected(raw, STRICT, /scheme|not a valid/);
    }
  });

  test('userinfo', () => {
    for (const raw of ['https://user:pass@example.com/', 'https://user@example.com/', 'https://:pass@example.com/', 'https://a%40b:c@example.com/']) {
      assertRejected(raw, STRICT, /username or password/);
    }
  });

  test('IPv4 literals: loopback, private, link-local, CGNAT, multicast, unspecified, broadcast, reserved', () => {
    const cases = [
      '127.0.0.1', '127.255.255.254',
      '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255',
      '169.254.169.254', '169.254.0.1',
      '100.64.0.1', '100.127.255.255',
      '224.0.0.1', '239.255.255.250',
      '0.0.0.0', '0.1.2.3',
      '255.255.255.255',
      '240.0.0.1', '192.0.2.1', '198.51.100.7', '203.0.113.9', '198.18.0.1', '192.0.0.8',
    ];
    for (const ip of cases) assertRejected(`https://${ip}/hook`, STRICT, /non-public address/);
  });

  test('IPv6 literals: loopback, unspecified, link-local, unique-local, multicast, site-local, documentation, teredo', () => {
    const cases = ['::1', '::', 'fe80::1', 'febf::1', 'fc00::1', 'fd12:3456:789a::1', 'ff02::1', 'ff05::2', 'fec0::1', '2001:db8::1', '2001::1', '100::1'];
    for (const ip of cases) assertRejected(`https://[${ip}]/hook`, STRICT, /non-public address/);
  });

  test('IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64 and 6to4 addresses embedding non-public IPv4', () => {
    const cases = [
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:192.168.1.1', '::ffff:0.0.0.0',
      '::127.0.0.1', '::7f00:1', '::10.0.0.1',
      '::ffff:0:7f00:1', '::ffff:0:808:808',
      '64:ff9b::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a00:1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::808:808',
      '2002:7f00:1::', '2002:7f00:1::1', '2002:c0a8:101::1', '2002:a9fe:a9fe::', '2002:a00:1:1::1',
    ];
    for (const ip of cases) assertRejected(`https://[${ip}]/hook`, STRICT, /non-public address/);
  });

  test('decimal, hex, octal and short IPv4 spellings (WHATWG normalises them to dotted form first)', () => {
    const cases: Array<[string, string]> = [
      ['https://2130706433/', '127.0.0.1'],
      ['https://0x7f000001/', '127.0.0.1'],
      ['https://017700000001/', '127.0.0.1'],
      ['https://0x7f.1/', '127.0.0.1'],
      ['https://0x7f.0x0.0x0.0x1/', '127.0.0.1'],
      ['https://0177.0.0.1/', '127.0.0.1'],
      ['https://0177.1/', '127.0.0.1'],
      ['https://127.1/', '127.0.0.1'],
      ['https://127.0.1/', '127.0.0.1'],
      ['https://127.000.000.001/', '127.0.0.1'],
      ['https://127.0.0.1./', '127.0.0.1'],
      ['https://0/', '0.0.0.0'],
      ['https://10.1/', '10.0.0.1'],
      ['https://3232235777/', '192.168.1.1'],
      ['https://0xa9fea9fe/', '169.254.169.254'],
      ['https://0xA9.0xFE.0xA9.0xFE/', '169.254.169.254'],
    ];
    for (const [raw, normalised] of cases) {
      assert.equal(new URL(raw).hostname, normalised, `WHATWG normalisation of ${raw}`);
      assertRejected(raw, STRICT, new RegExp(`non-public address \\(${normalised.replace(/\./g, '\\.')}`));
    }
    // http:// spellings are refused too (for the scheme already)
    assertRejected('http://2130706433/', STRICT);
  });

  test('internal host names', () => {
    const cases = [
      'localhost', 'LOCALHOST', 'localhost.', 'api.localhost', 'a.b.localhost',
      'printer.local', 'metadata.google.internal', 'db.internal', 'router.lan', 'nas.home.arpa', 'wiki.intranet', 'git.corp',
      'git.corp.', 'NAS.Home.Arpa', '%6c%6fcalhost', 'localhost.localdomain',
    ];
    for (const host of cases) assertRejected(`https://${host}/hook`, STRICT, /internal name|single-label/);
  });

  test('single-label host names', () => {
    for (const host of ['intranet', 'metadata', 'webhooks', 'corp', 'router.']) {
      assertRejected(`https://${host}/hook`, STRICT, /single-label/);
    }
  });

  test('MEDIA_URL_REJECTED carries the media wording', () => {
    assertRejected('https://127.0.0.1/a.jpg', STRICT, /non-public/, 'MEDIA_URL_REJECTED');
    assertRejected('http://cdn.example.com/a.jpg', STRICT, /https/, 'MEDIA_URL_REJECTED');
  });
});

describe('checkTargetUrl allows public targets (allowPrivateTargets false)', () => {
  test('public names and addresses', () => {
    const cases: Array<[string, string]> = [
      ['https://example.com/hook', 'https://example.com/hook'],
      ['https://hooks.example.com:8443/path?q=1#frag', 'https://hooks.example.com:8443/path?q=1#frag'],
      ['https://EXAMPLE.com/Hook', 'https://example.com/Hook'],
      ['https://example.com./hook', 'https://example.com./hook'],
      ['https://local.example.com/', 'https://local.example.com/'],
      ['https://mylocalhost.com/', 'https://mylocalhost.com/'],
      ['https://internal.example.org/', 'https://internal.example.org/'],
      ['https://ёлка.рф/hook', 'https://xn--80atc1g.xn--p1ai/hook'],
      ['https://8.8.8.8/hook', 'https://8.8.8.8/hook'],
      ['https://93.184.216.34/', 'https://93.184.216.34/'],
      ['https://172.32.0.1/', 'https://172.32.0.1/'],
      ['https://172.15.255.255/', 'https://172.15.255.255/'],
      ['https://100.128.0.1/', 'https://100.128.0.1/'],
      ['https://11.0.0.1/', 'https://11.0.0.1/'],
      ['https://192.169.0.1/', 'https://192.169.0.1/'],
      ['https://134744072/', 'https://8.8.8.8/'],
      ['https://[2606:4700:4700::1111]/hook', 'https://[2606:4700:4700::1111]/hook'],
      ['https://[::ffff:8.8.8.8]/', 'https://[::ffff:808:808]/'],
      ['https://[64:ff9b::8.8.8.8]/', 'https://[64:ff9b::808:808]/'],
      ['https://[2002:808:808::1]/', 'https://[2002:808:808::1]/'],
    ];
    for (const [raw, href] of cases) {
      const url = checkTargetUrl(raw, STRICT, 'WEBHOOK_URL_REJECTED');
      assert.ok(url instanceof URL);
      assert.equal(url.href, href);
    }
  });
});

describe('checkTargetUrl with allowPrivateTargets true', () => {
  test('http, loopback, private addresses and internal names are allowed', () => {
    for (const raw of [
      'http://localhost:3000/hook', 'http://127.0.0.1:8080/', 'https://10.0.0.5/', 'http://[::1]:9000/x',
      'http://printer.local/', 'http://webhooks/', 'http://host.docker.internal:8080/', 'http://2130706433/',
      'http://169.254.169.254/', 'https://example.com/hook',
    ]) {
      assert.ok(checkTargetUrl(raw, LOCAL, 'WEBHOOK_URL_REJECTED') instanceof URL, raw);
    }
  });

  test('malformed URLs, other schemes and userinfo are still refused', () => {
    assertRejected('not a url', LOCAL, /not a valid/);
    assertRejected('ftp://127.0.0.1/', LOCAL, /scheme/);
    assertRejected('file:///etc/passwd', LOCAL, /scheme/);
    assertRejected('javascript:alert(1)', LOCAL, /scheme/);
    assertRejected('ws://localhost/', LOCAL, /scheme/);
    assertRejected('http://user:pass@localhost:3000/', LOCAL, /username or password/);
  });
});

describe('isBlockedAddress and isInternalHostname', () => {
  test('isBlockedAddress', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1', '::ffff:7f00:1', 'fe80::1%eth0', '0x7f.1', '127.1', 'not-an-ip', '', '2002:a00:1::', '64:ff9b::a00:1']) {
      assert.equal(isBlockedAddress(ip), true, ip);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '[2606:4700:4700::1111]', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::']) {
      assert.equal(isBlockedAddress(ip), false, ip);
    }
  });

  test('isInternalHostname', () => {
    for (const h of ['localhost', 'x.localhost', 'a.local', 'a.internal', 'a.lan', 'a.home.arpa', 'a.intranet', 'a.corp', 'single', 'A.LOCAL.', '']) {
      assert.equal(isInternalHostname(h), true, h);
    }
    for (const h of ['example.com', 'local.example.com', 'corp.example.com', 'example.com.']) {
      assert.equal(isInternalHostname(h), false, h);
    }
  });
});

describe('createGuardedDispatcher', () => {
  let server: http.Server;
  let port = 0;
  let connections = 0;
  const hostHeaders: string[] = [];
  const bodies: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hostHeaders.push(req.headers.host ?? '');
        bodies.push(Buffer.concat(chunks).toString());
        res.end('ok');
      });
    });
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const mapping = (table: Record<string, Array<{ address: string; family: 4 | 6 }>>, calls: string[]): Resolver => async (hostname) => {
    calls.push(hostname);
    const hit = table[hostname];
    if (!hit) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return hit;
  };

  const body = Buffer.from('{"event":"test"}');

  test('a host name resolving to 127.0.0.1 is refused and no connection reaches the listener', async () => {
    const calls: string[] = [];
    const dispatcher = createGuardedDispatcher(STRICT, { resolver: mapping({ 'hooks.example.com': [{ address: '127.0.0.1', family: 4 }] }, calls) });
    const before = connections;
    try {
      const out = await postDelivery(dispatcher, { url: `https://hooks.example.com:${port}/hook`, body, headers: {}, timeoutMs: 2000 });
      assert.equal(out.ok, false);
      assert.equal(out.statusCode, undefined);
      assert.match(out.error ?? '', /hooks\.example\.com resolved to a blocked address/);
      assert.doesNotMatch(out.error ?? '', /127\.0\.0\.1/, 'the resolved address is not disclosed to the caller');
      assert.deepEqual(calls, ['hooks.example.com']);

      // the error reaches undici callers as a BlockedTargetError
      await assert.rejects(
        request(`https://hooks.example.com:${port}/hook`, { dispatcher, method: 'POST', body }),
        (err: unknown) => err instanceof Error && (err as NodeJS.ErrnoException).code === 'ERR_BLOCKED_TARGET' && /resolved to a blocked address/.test(err.message),
      );
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(connections, before, 'no TCP connection reached 127.0.0.1');
    } finally {
      await dispatcher.close();
    }
  });

  test('an answer mixing public and private addresses is refused', async () => {
    const calls: string[] = [];
    const dispatcher = createGuardedDispatcher(STRICT, {
      resolver: mapping({ 'hooks.example.com': [{ address: '93.184.216.34', family: 4 }, { address: '::ffff:127.0.0.1', family: 6 }] }, calls),
    });
    try {
      const out = await postDelivery(dispatcher, { url: `https://hooks.example.com:${port}/hook`, body, headers: {}, timeoutMs: 2000 });
      assert.equal(out.ok, false);
      assert.match(out.error ?? '', /resolved to a blocked address/);
      assert.doesNotMatch(out.error ?? '', /::ffff/, 'the resolved address is not disclosed to the caller');
    } finally {
      await dispatcher.close();
    }
  });

  test('private, link-local and IPv6 answers are each refused', async () => {
    for (const answer of [
      { address: '10.0.0.7', family: 4 as const },
      { address: '169.254.169.254', family: 4 as const },
      { address: '100.64.1.1', family: 4 as const },
      { address: '::1', family: 6 as const },
      { address: 'fd00::1', family: 6 as const },
      { address: '64:ff9b::7f00:1', family: 6 as const },
    ]) {
      const dispatcher = createGuardedDispatcher(STRICT, { resolver: mapping({ 'hooks.example.com': [answer] }, []) });
      try {
        const out = await postDelivery(dispatcher, { url: 'https://hooks.example.com/hook', body, headers: {}, timeoutMs: 2000 });
        assert.equal(out.ok, false);
        assert.match(out.error ?? '', /resolved to a blocked address/, answer.address);
      } finally {
        await dispatcher.close();
      }
    }
  });

  test('literal-IP, internal-name and plain-http targets are refused without resolving or connecting', async () => {
    const calls: string[] = [];
    const dispatcher = createGuardedDispatcher(STRICT, { resolver: mapping({}, calls) });
    const before = connections;
    try {
      for (const [url, pattern] of [
        [`https://127.0.0.1:${port}/hook`, /127\.0\.0\.1 is a blocked address/],
        [`https://[::1]:${port}/hook`, /::1 is a blocked address/],
        [`https://[::ffff:127.0.0.1]:${port}/hook`, /is a blocked address/],
        [`https://2130706433:${port}/hook`, /127\.0\.0\.1 is a blocked address/],
        [`https://localhost:${port}/hook`, /internal host name/],
        [`https://db.internal:${port}/hook`, /internal host name/],
        [`http://hooks.example.com:${port}/hook`, /https is required/],
      ] as const) {
        const out = await postDelivery(dispatcher, { url, body, headers: {}, timeoutMs: 2000 });
        assert.equal(out.ok, false, url);
        assert.match(out.error ?? '', pattern, url);
      }
      assert.deepEqual(calls, []);
      assert.equal(connections, before);
    } finally {
      await dispatcher.close();
    }
  });

  test('an unknown host name fails cleanly', async () => {
    const dispatcher = createGuardedDispatcher(STRICT, { resolver: mapping({}, []) });
    try {
      const out = await postDelivery(dispatcher, { url: 'https://nowhere.example.com/hook', body, headers: {}, timeoutMs: 2000 });
      assert.equal(out.ok, false);
      assert.match(out.error ?? '', /ENOTFOUND/);
    } finally {
      await dispatcher.close();
    }
  });

  test('with allowPrivateTargets, delivery connects to the resolved address and keeps the original Host header', async () => {
    const calls: string[] = [];
    const dispatcher = createGuardedDispatcher(LOCAL, {
      resolver: mapping({ 'hooks.example.com': [{ address: '127.0.0.1', family: 4 }] }, calls),
    });
    const before = connections;
    try {
      const out = await postDelivery(dispatcher, {
        url: `http://hooks.example.com:${port}/hook`,
        body,
        headers: { 'content-type': 'application/json' },
        timeoutMs: 2000,
      });
      assert.deepEqual({ ok: out.ok, statusCode: out.statusCode }, { ok: true, statusCode: 200 });
      assert.deepEqual(calls, ['hooks.example.com']);
      assert.equal(hostHeaders.at(-1), `hooks.example.com:${port}`);
      assert.equal(bodies.at(-1), body.toString());
      assert.equal(connections, before + 1);

      const literal = await postDelivery(dispatcher, { url: `http://127.0.0.1:${port}/hook`, body, headers: {}, timeoutMs: 2000 });
      assert.equal(literal.ok, true);
      assert.equal(hostHeaders.at(-1), `127.0.0.1:${port}`);
    } finally {
      await dispatcher.close();
    }
  });

  test('the default resolver uses the system resolver', async () => {
    const answers = await defaultResolver('localhost');
    assert.ok(answers.length > 0);
    for (const a of answers) {
      assert.ok(a.family === 4 || a.family === 6);
      assert.equal(isBlockedAddress(a.address), true);
    }
  });
});
