// Every answer says nosniff (a received file is served with the type its sender claimed), a backup download is not
// cached anywhere, and a file name never carries control or bidi characters (U+202E turns "fdp.exe" into "exe.pdf")
// into what is stored, sent to WhatsApp, or served in Content-Disposition.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { safeFileName } from '../../src/media/file-name.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { onPostgres } from '../helpers/daemon-db.js';

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|%(?:[01][0-9A-F]|7F|C2%[89][0-9A-F]|E2%80%(?:8[EF]|A[A-E])|E2%81%A[6-9]|D8%9C)/i;

let daemon: TestDaemon;
let events: EventCollector;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', '+15550970001');
  await pairedSession(daemon, 'b', '+15550970002');
});
after(async () => {
  events.close();
  await daemon.cleanup();
});

test('X-Content-Type-Options: nosniff on a JSON answer, an error, an unknown route and a download', async () => {
  const ok = await daemon.request('GET', '/api/sessions');
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('x-content-type-options'), 'nosniff');
  const unauthorized = await daemon.request('GET', '/api/sessions', undefined, null);
  assert.equal(unauthorized.status, 401);
  assert.equal(unauthorized.headers.get('x-content-type-options'), 'nosniff');
  const unknown = await fetch(`${daemon.url}/no/such/route`);
  assert.equal(unknown.status, 404);
  assert.equal(unknown.headers.get('x-content-type-options'), 'nosniff');
  const health = await fetch(`${daemon.url}/health`);
  assert.equal(health.headers.get('x-content-type-options'), 'nosniff');
});

test('a backup download carries Cache-Control: no-store', async () => {
  const made = await daemon.request('POST', '/api/admin/backups', {});
  if (onPostgres()) {
    // the daemon backs up a SQLite store only (PostgreSQL has pg_dump): the refusal says nosniff too
    assert.equal(made.status, 409);
    assert.equal(made.headers.get('x-content-type-options'), 'nosniff');
    return;
  }
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const download = await fetch(`${daemon.url}/api/admin/backups/${made.body.data.name}`, { headers: { Authorization: `Bearer ${daemon.masterKey}` } });
  assert.equal(download.status, 200);
  assert.equal(download.headers.get('cache-control'), 'no-store');
  assert.equal(download.headers.get('x-content-type-options'), 'nosniff');
  await download.arrayBuffer();
});

test('a document name with an RLO is stored, sent and served without it', async () => {
  const filename = 'invoice\u202efdp.exe';
  const sent = await daemon.request('POST', '/api/messages/send', {
    session: 'a', chatId: '+15550970002', type: 'file', filename, mimeType: 'application/pdf', base64: Buffer.from('%PDF-1.4 x').toString('base64'),
  });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const received = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === sent.body.data.messageId);
  for (const [session, mediaId] of [['a', sent.body.data.mediaId], ['b', received.payload.mediaId ?? received.payload.media?.id]] as const) {
    const record = await daemon.request('GET', `/api/sessions/${session}/media/${mediaId}`);
    assert.equal(record.status, 200);
    assert.equal(record.body.data.filename, 'invoice_fdp.exe', session);
    const download = await daemon.request('POST', `/api/sessions/${session}/media/${mediaId}/download`, {});
    assert.equal(download.status, 200);
    const disposition = download.headers.get('content-disposition')!;
    assert.match(disposition, /invoice_fdp\.exe/);
    assert.doesNotMatch(disposition, UNSAFE, disposition);
  }
});

test('safeFileName replaces C0, C1 and bidi controls; a name of nothing else is no name', () => {
  assert.equal(safeFileName('a\u0000b\u001bc\u0085d\u200ee\u2067f\u061cg.txt'), 'a_b_c_d_e_f_g.txt');
  assert.equal(safeFileName('report ünïcode.pdf'), 'report ünïcode.pdf');
  assert.equal(safeFileName('\u202e\u202c'), undefined);
  assert.equal(safeFileName(null), undefined);
});
