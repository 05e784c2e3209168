// A declared mimeType is a MIME type and nothing more: it is stored and later served back as the Content-Type of a
// download, where CR/LF or other junk made every download of the file a 500. Refused where it enters (400 naming
// /mimeType), and a stored type that is not well formed (a received file's type comes from the sender) is served as
// application/octet-stream.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { safeMime } from '../../src/media/mime.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';

let daemon: TestDaemon;
let events: EventCollector;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', '+15550940001');
  await pairedSession(daemon, 'b', '+15550940002');
});
after(async () => {
  events.close();
  await daemon.cleanup();
});

const file = (mimeType: string) =>
  daemon.request('POST', '/api/messages/send', { session: 'a', chatId: '+15550940002', type: 'file', filename: 'notes.txt', mimeType, base64: Buffer.from('hello').toString('base64') });

test('a mimeType with CR/LF, non-ASCII or trailing junk is a 400 naming /mimeType, on send and on sandbox inbound', async () => {
  for (const mimeType of ['text/plain\r\nX-Injected: 1', 'text/plain\n', 'text/plainé', 'text/plain junk', 'image/png ']) {
    const res = await file(mimeType);
    assert.equal(res.status, 400, `${JSON.stringify(mimeType)}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.details[0].path, '/mimeType');
    const inbound = await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: '+15550940003', type: 'file', filename: 'x.txt', mimeType, base64: 'aGVsbG8=' });
    assert.equal(inbound.status, 400, `inbound ${JSON.stringify(mimeType)}: ${JSON.stringify(inbound.body)}`);
  }
});

test('well-formed types, with parameters, are kept and served as given, to the sender and the recipient', async () => {
  for (const mimeType of ['text/plain', 'text/csv; charset=utf-8', 'application/vnd.ms-excel', 'text/plain; charset="utf-8"']) {
    const res = await file(mimeType);
    assert.equal(res.status, 200, `${mimeType}: ${JSON.stringify(res.body)}`);
    const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === res.body.data.messageId);
    for (const [session, mediaId] of [['a', res.body.data.mediaId], ['b', got.payload.mediaId ?? got.payload.media?.id]]) {
      const download = await daemon.request('POST', `/api/sessions/${session}/media/${mediaId}/download`, {});
      assert.equal(download.status, 200, `${session} ${mimeType}: ${JSON.stringify(download.body)}`);
      assert.equal(download.body, 'hello');
      assert.match(download.headers.get('content-type')!, new RegExp(`^${mimeType.split(';')[0]!.replace(/[.+]/g, '\\$&')}`));
    }
  }
});

test('a stored type that is not a MIME type is served as application/octet-stream', () => {
  assert.equal(safeMime('text/plain\r\nX-Injected: 1'), 'application/octet-stream');
  assert.equal(safeMime('image/pngé'), 'application/octet-stream');
  assert.equal(safeMime(null), 'application/octet-stream');
  assert.equal(safeMime('audio/ogg; codecs=opus'), 'audio/ogg; codecs=opus');
});
