// Link previews built by the gateway: meta parsing, the URL guard, redirects, the HTML cap, the deadline, thumbnails.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Jimp } from 'jimp';
import { buildLinkPreview, firstUrl, PREVIEW_HTML_MAX_BYTES, readMeta } from '../../src/messages/link-preview.js';
import { createGuardedDispatcher } from '../../src/net/guarded-dispatcher.js';
import type { MediaSource } from '../../src/messages/content.js';
import { png } from '../engine/samples.js';

const local: MediaSource = { urlPolicy: { allowPrivateTargets: true }, dispatcher: createGuardedDispatcher({ allowPrivateTargets: true }) };
const publicOnly: MediaSource = { urlPolicy: { allowPrivateTargets: false }, dispatcher: createGuardedDispatcher({ allowPrivateTargets: false }) };

const page = (head: string, body = '') => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

describe('link preview parsing', () => {
  it('finds the first http(s) link, without the punctuation that ends a sentence', () => {
    assert.equal(firstUrl('see https://example.com/a?b=1. And http://other.org'), 'https://example.com/a?b=1');
    assert.equal(firstUrl('(http://example.com/x)'), 'http://example.com/x');
    assert.equal(firstUrl('no link, just ftp://example.com and example.com'), undefined);
  });

  it('prefers og: tags, then twitter:, then <title> and the description meta; entities decoded; image resolved', async () => {
    const base = new URL('https://example.com/dir/page');
    const og = await readMeta(page('<title>T</title><meta property="og:title" content="OG &amp; more"><meta name="description" content="D"><meta property="og:image" content="../img.png">'), base);
    assert.deepEqual({ ...og, image: og.image?.href }, { title: 'OG & more', description: 'D', image: 'https://example.com/img.png' });
    const plain = await readMeta(page('<title>\n  Plain   title </title><meta name="twitter:description" content="tw">'), base);
    assert.deepEqual(plain, { title: 'Plain title', description: 'tw' });
    assert.deepEqual(await readMeta(page('<meta property="og:image" content="javascript:alert(1)">'), base), {});
  });
});

describe('link preview fetching', () => {
  let server: Server;
  let base: string;
  const hits: string[] = [];
  let hugeSent = 0;

  before(async () => {
    const cover = png(300);
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      hits.push(path);
      const html = (text: string) => {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(text);
      };
      if (path === '/article') return html(page('<meta property="og:title" content="Title"><meta property="og:description" content="Desc"><meta property="og:image" content="/cover.png">'));
      if (path === '/no-image') return html(page('<title>Only a title</title>'));
      if (path === '/untitled') return html(page('', 'text'));
      if (path === '/broken-image') return html(page('<title>Broken image</title><meta property="og:image" content="/not-an-image">'));
      if (path === '/not-an-image') return res.end('plain bytes');
      if (path === '/cover.png') {
        res.setHeader('content-type', 'image/png');
        return res.end(cover);
      }
      if (path === '/moved') return res.writeHead(301, { location: '/article' }).end();
      if (path.startsWith('/loop')) return res.writeHead(302, { location: `/loop${path.length}` }).end();
      if (path === '/json') {
        res.setHeader('content-type', 'application/json');
        return res.end('{}');
      }
      if (path === '/slow') return void setTimeout(() => html(page('<title>late</title>')), 3000).unref();
      if (path === '/huge') {
        res.setHeader('content-type', 'text/html');
        res.write(page('<title>Huge</title>').replace('</body></html>', ''));
        const chunk = Buffer.alloc(64 * 1024, 'a');
        const pump = () => {
          while (hugeSent < 8 * 1024 * 1024) {
            hugeSent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => undefined);
        return pump();
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });

  it('builds title, description and a thumbnail scaled to at most 192 px', async () => {
    const { preview, outcome } = await buildLinkPreview(`look ${base}/article!`, local);
    assert.deepEqual(outcome, { status: 'sent', url: `${base}/article` });
    assert.equal(preview?.title, 'Title');
    assert.equal(preview?.description, 'Desc');
    const thumbnail = await Jimp.read(preview!.thumbnail!);
    assert.equal(thumbnail.width, 192);
    assert.equal(thumbnail.height, 192);
    assert.equal(preview!.thumbnail!.subarray(0, 3).toString('hex'), 'ffd8ff');
  });

  it('a text without a link has no preview and no outcome', async () => {
    assert.deepEqual(await buildLinkPreview('nothing to see', local), {});
  });

  it('a page without an image, or whose image is not one, still gets a preview without a thumbnail', async () => {
    for (const path of ['/no-image', '/broken-image']) {
      const { preview, outcome } = await buildLinkPreview(`${base}${path}`, local);
      assert.equal(outcome?.status, 'sent', path);
      assert.ok(preview?.title);
      assert.equal(preview?.thumbnail, undefined);
    }
  });

  it('follows a redirect, and gives up after three', async () => {
    assert.equal((await buildLinkPreview(`${base}/moved`, local)).preview?.title, 'Title');
    const looped = await buildLinkPreview(`${base}/loop`, local);
    assert.equal(looped.outcome?.status, 'failed');
    assert.match((looped.outcome as { reason: string }).reason, /more than 3 redirects/);
  });

  it('fails, with the reason, on a 404, a page that is not HTML, or one with no title', async () => {
    const reasons: Record<string, RegExp> = { '/gone': /HTTP 404/, '/json': /not an HTML page/, '/untitled': /no title/ };
    for (const [path, reason] of Object.entries(reasons)) {
      const { preview, outcome } = await buildLinkPreview(`${base}${path}`, local);
      assert.equal(preview, undefined);
      assert.equal(outcome?.status, 'failed');
      assert.match((outcome as { reason: string }).reason, reason, path);
    }
  });

  it('reads at most 512 KB of a page and stops the download', async () => {
    const { preview } = await buildLinkPreview(`${base}/huge`, local);
    assert.equal(preview?.title, 'Huge');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(hugeSent < 8 * 1024 * 1024, `the server was cut off (${hugeSent} bytes written, cap ${PREVIEW_HTML_MAX_BYTES})`);
  });

  it('gives up at the deadline', async () => {
    const started = Date.now();
    const { outcome } = await buildLinkPreview(`${base}/slow`, local, 500);
    assert.equal(outcome?.status, 'failed');
    assert.match((outcome as { reason: string }).reason, /in time/);
    assert.ok(Date.now() - started < 2500);
  });

  it('a private address is refused by the public-only URL policy before anything is fetched', async () => {
    const before = hits.length;
    const { outcome } = await buildLinkPreview(`see ${base}/article`, publicOnly);
    assert.equal(outcome?.status, 'failed');
    assert.match((outcome as { reason: string }).reason, /https|private|loopback|refused|rejected/i);
    assert.equal(hits.length, before);
  });
});
