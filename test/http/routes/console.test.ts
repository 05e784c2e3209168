// GET /console and its files: a page with a strict Content-Security-Policy, hashed assets cached for a year, and no
// console at all (404) with console.enabled: false.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../../helpers/daemon.js';

describe('the web console', () => {
  let daemon: TestDaemon;
  before(async () => {
    daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  });
  after(() => daemon?.cleanup());

  test('GET /console: HTML, no-cache, a policy that allows only this origin and no framing, no inline script or style', async () => {
    const res = await fetch(`${daemon.url}/console`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'", "img-src 'self' data: blob:"]) {
      assert.ok(csp.split('; ').includes(directive), `${directive} in ${csp}`);
    }
    assert.doesNotMatch(csp, /https?:|\*|unsafe-/, 'no other origin, nothing inline, no eval');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    const html = await res.text();
    assert.doesNotMatch(html, /https?:\/\//, 'no absolute URL: nothing from a CDN or a font service');
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=/, 'scripts and styles are files');
  });

  test('its assets are content-hashed, typed and cached for a year; other names are 404', async () => {
    const html = await (await fetch(`${daemon.url}/console`)).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.equal(assets.length, 2, html);
    let total = 0;
    for (const path of assets) {
      assert.match(path, /\/(app|style)-[A-Z0-9]{8}\.(js|css)$/, 'named by content hash');
      const res = await fetch(`${daemon.url}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.match(res.headers.get('content-type') ?? '', path.endsWith('.js') ? /^application\/javascript/ : /^text\/css/);
      assert.ok(res.headers.get('content-security-policy'));
      total += (await res.arrayBuffer()).byteLength;
    }
    assert.ok(total > 10_000, `the bundle holds the app (${total} bytes)`);
    for (const name of ['nope.js', 'index.html', 'manifest.json', '..%2Fmanifest.json', '..%2F..%2Fpackage.json']) {
      const res = await daemon.request('GET', `/console/assets/${name}`, undefined, null);
      assert.equal(res.status, 404, name);
      assert.ok(['NOT_FOUND', 'ROUTE_NOT_FOUND'].includes(res.body.error.code), `${name}: ${res.body.error.code}`);
    }
  });

  test('the OpenAPI document lists the console routes, public', async () => {
    const document = (await (await fetch(`${daemon.url}/api/openapi.json`)).json()) as { paths: Record<string, { get?: { operationId: string; security?: unknown[] } }> };
    assert.equal(document.paths['/console']?.get?.operationId, 'getConsolePage');
    assert.equal(document.paths['/console/assets/{file}']?.get?.operationId, 'getConsoleAsset');
  });
});

describe('the web console with console.enabled: false', () => {
  let daemon: TestDaemon;
  before(async () => {
    daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' }, config: 'console:\n  enabled: false\n' });
  });
  after(() => daemon?.cleanup());

  test('/console and its files are 404; the API is unaffected', async () => {
    for (const path of ['/console', '/console/assets/anything.js']) {
      const res = await fetch(`${daemon.url}${path}`);
      assert.equal(res.status, 404, path);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'ROUTE_NOT_FOUND');
    }
    assert.equal((await daemon.request('GET', '/api/account')).status, 200);
  });

  test('GATEWAY_CONSOLE_ENABLED=false does the same', async () => {
    const other = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_CONSOLE_ENABLED: 'false' } });
    try {
      assert.equal((await fetch(`${other.url}/console`)).status, 404);
    } finally {
      await other.cleanup();
    }
  });
});
