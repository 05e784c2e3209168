// GET /docs and its files: served by the daemon from swagger-ui-dist, with a policy that allows no other origin.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../../helpers/daemon.js';

describe('the API reference page', () => {
  let daemon: TestDaemon;
  before(async () => {
    daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  });
  after(async () => {
    await daemon.cleanup();
  });

  test('GET /docs: our HTML, no key, a same-origin-only policy, no external URL and no inline script', async () => {
    const res = await fetch(`${daemon.url}/docs`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'"]) assert.ok(csp.includes(directive), `${directive} in ${csp}`);
    assert.doesNotMatch(csp, /https?:|\*|unsafe-eval/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const html = await res.text();
    assert.doesNotMatch(html, /https?:\/\//, 'no absolute URL: everything comes from this origin');
    assert.doesNotMatch(html, /<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/, 'scripts are files');
    assert.match(html, /\/api\/openapi\.json/);
  });

  test('every file the page loads is served with its type and a year of caching; the initializer points at the live document', async () => {
    const html = await (await fetch(`${daemon.url}/docs`)).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(assets.map((a) => a.replace(/\?.*$/, '').split('/').pop()).sort(), ['favicon-32x32.png', 'init.js', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css']);
    for (const path of assets) {
      const res = await fetch(`${daemon.url}${path.replaceAll('&amp;', '&')}`);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('cache-control') ?? '', /max-age=31536000/, path);
      const type = res.headers.get('content-type') ?? '';
      if (path.includes('.js')) assert.match(type, /^application\/javascript/, path);
      if (path.includes('.css')) assert.match(type, /^text\/css/, path);
      if (path.includes('.png')) assert.equal(type, 'image/png', path);
      const body = Buffer.from(await res.arrayBuffer());
      assert.ok(body.length > 0, path);
      if (path.includes('init.js')) {
        const text = body.toString('utf8');
        assert.match(text, /url: "\/api\/openapi\.json"/);
        assert.match(text, /validatorUrl: null/, 'the default validator badge would call validator.swagger.io');
      }
    }
  });

  test('a file the page does not have is a 404, also when the name tries to leave the folder', async () => {
    for (const name of ['nope.js', 'index.html', 'package.json', '..%2Fpackage.json', '..%2F..%2Fpackage.json', 'swagger-ui.js.map']) {
      const res = await daemon.request('GET', `/docs/assets/${name}`, undefined, null);
      assert.equal(res.status, 404, name);
      assert.ok(['NOT_FOUND', 'ROUTE_NOT_FOUND'].includes(res.body.error.code), `${name}: ${res.body.error.code}`);
    }
  });
});

describe('the API reference page with docs.public: false', () => {
  let daemon: TestDaemon;
  before(async () => {
    daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' }, config: 'docs:\n  public: false\n' });
  });
  after(async () => {
    await daemon.cleanup();
  });

  // plain fetch: the helpers' contract document is built with the default docs.public: true; this daemon's own document
  // (checked below) is the one that documents the 401
  test('needs a key, as this daemon\'s own document says', async () => {
    const anonymous = await fetch(`${daemon.url}/docs`);
    assert.equal(anonymous.status, 401);
    assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
    assert.equal((await fetch(`${daemon.url}/docs/assets/init.js`)).status, 401);
    const document = (await (await fetch(`${daemon.url}/api/openapi.json`, { headers: { Authorization: `Bearer ${daemon.masterKey}` } })).json()) as {
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
    };
    assert.ok(document.paths['/docs']?.get.responses['401'], 'the live document documents 401 for /docs');
    assert.ok(document.paths['/docs/assets/{file}']?.get.responses['401']);
    const withKey = await fetch(`${daemon.url}/docs`, { headers: { Authorization: `Bearer ${daemon.masterKey}` } });
    assert.equal(withKey.status, 200);
    assert.match(await withKey.text(), /swagger-ui/);
  });
});
