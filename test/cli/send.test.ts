// `gateway send`: text, --image and --file against a real daemon with two paired sandbox sessions; the message arrives at the other one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliFor } from '../helpers/cli.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';

const A = '+15551200001';
const B = '+15551200002';
const A_JID = '15551200001@s.whatsapp.net';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let daemon: TestDaemon;
let events: EventCollector;
let files: string;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'alice', A);
  await pairedSession(daemon, 'bob', B);
  files = mkdtempSync(join(tmpdir(), 'gateway-send-'));
});
after(async () => {
  events.close();
  await daemon.cleanup();
  rmSync(files, { recursive: true, force: true });
});

const gateway = cliFor(() => daemon);

/** The message id the CLI printed (`messageId  3EB0…`), and the message.received event bob got for it. */
async function receivedByBob(stdout: string) {
  const id = /^messageId\s+(3EB0[0-9A-F]{20})$/m.exec(stdout)?.[1];
  assert.ok(id, `no messageId in:\n${stdout}`);
  const event = await events.next((e) => e.session === 'bob' && e.event === 'message.received' && e.payload.messageId === id, 5000, `bob receives ${id}`);
  assert.equal(event.payload.chatId, A_JID);
  assert.equal(event.payload.from.phoneNumber, A);
  return event.payload;
}

test('gateway send SESSION CHAT TEXT: a text message arrives at the other session', async () => {
  const run = await gateway('send', 'alice', B, 'hello from the CLI');
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^status\s+sent$/m);
  const received = await receivedByBob(run.stdout);
  assert.equal(received.type, 'text');
  assert.equal(received.text, 'hello from the CLI');
  assert.equal(received.mediaId, undefined);
});

test('gateway send --image PATH: an image with the text as caption and a mediaId', async () => {
  const path = join(files, 'pixel.png');
  writeFileSync(path, PNG);
  const run = await gateway('send', 'alice', B, 'a pixel', '--image', path);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^mediaId\s+[0-9a-f-]{36}$/m);
  const received = await receivedByBob(run.stdout);
  assert.equal(received.type, 'image');
  assert.equal(received.caption, 'a pixel');
  assert.equal(received.mimeType, 'image/png');
  assert.equal(received.size, PNG.length);
  assert.match(received.mediaId, /^[0-9a-f-]{36}$/);
  const record = await daemon.request('GET', `/api/sessions/bob/media/${received.mediaId}`);
  assert.equal(record.status, 200, JSON.stringify(record.body));
});

test('gateway send --file PATH: a document named after the file, with a mediaId', async () => {
  const path = join(files, 'report.txt');
  writeFileSync(path, 'quarterly numbers\n');
  const run = await gateway('--json', 'send', 'alice', B, '--file', path);
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.match(result.mediaId, /^[0-9a-f-]{36}$/);
  const received = await receivedByBob(`messageId  ${result.messageId}`);
  assert.equal(received.type, 'file');
  assert.equal(received.filename, 'report.txt');
  assert.equal(received.size, 'quarterly numbers\n'.length);
  const download = await daemon.request('POST', `/api/sessions/bob/media/${received.mediaId}/download`, {});
  assert.equal(download.status, 200);
  assert.equal(download.body, 'quarterly numbers\n');
});

test('an unknown session or a missing file: non-zero exit and a one-line error, nothing sent', async () => {
  const before = events.all((e) => e.event === 'message.received').length;
  const ghost = await gateway('send', 'ghost', B, 'hello?');
  assert.notEqual(ghost.code, 0);
  assert.equal(ghost.stdout, '');
  assert.match(ghost.stderr, /^error: .*SESSION_NOT_FOUND.*\n$/);
  assert.equal(ghost.stderr.trim().split('\n').length, 1);

  const missing = await gateway('send', 'alice', B, '--image', join(files, 'nope.png'));
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /^error: cannot read .*nope\.png\n$/);

  const noText = await gateway('send', 'alice', B);
  assert.notEqual(noText.code, 0);
  assert.equal(noText.stderr.trim().split('\n').length, 1);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(events.all((e) => e.event === 'message.received').length, before);
});
