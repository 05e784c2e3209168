// Nested JSON and oversized side fields (issue 27, item 3.2): a body nested more than 32 levels is refused with 400
// JSON_TOO_DEEP, on ordinary routes and while a media route's large body streams in; a media body keeps at most the
// ordinary body limit besides `base64`; a client token's rate limit is checked before its body is read.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { rawExchange, requestHead, within } from '../helpers/raw-http.js';
import { checkJsonDepth, MAX_JSON_DEPTH } from '../../src/http/middleware/json-depth.js';
import { StreamedJsonBody } from '../../src/http/middleware/streamed-body.js';
import type { GatewayError } from '../../src/errors.js';

let daemon: TestDaemon;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  assert.equal((await daemon.request('POST', '/api/sessions', { name: 'a' })).status, 201);
});
after(() => daemon.cleanup());

const nested = (depth: number) => `{"session":"a","x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
const isTooDeep = (err: GatewayError) => err.code === 'JSON_TOO_DEEP';

test('the depth check counts arrays and objects, not brackets inside strings', () => {
  checkJsonDepth(nested(MAX_JSON_DEPTH));
  assert.throws(() => checkJsonDepth(nested(MAX_JSON_DEPTH + 1)), isTooDeep);
  checkJsonDepth(`{"x":"${'['.repeat(100)}\\"${'{'.repeat(100)}"}`);
  const parser = new StreamedJsonBody(1 << 20);
  assert.throws(() => parser.push(Buffer.from(nested(MAX_JSON_DEPTH + 1))), isTooDeep);
});

test('an ordinary route refuses a body nested deeper than 32 levels with 400 JSON_TOO_DEEP', async () => {
  const deep = await daemon.request('POST', '/api/client-tokens', nested(MAX_JSON_DEPTH + 1));
  assert.equal(deep.status, 400);
  assert.equal(deep.body.error.code, 'JSON_TOO_DEEP');
  const deepest = await daemon.request('POST', '/api/client-tokens', nested(MAX_JSON_DEPTH));
  assert.equal(deepest.body.error.code, 'VALIDATION_FAILED', '32 levels are parsed, then validated');
});

test('a media route refuses deep nesting while the body streams in, without waiting for the rest', async () => {
  const head = requestHead('POST', '/api/messages/send', { Authorization: `Bearer ${daemon.masterKey}`, 'Content-Type': 'application/json', 'Content-Length': 60 * 1024 * 1024 });
  const exchange = rawExchange(daemon.url, head, `{"session":"a","x":${'['.repeat(2 * 1024 * 1024)}`);
  try {
    const answer = await within(exchange.answer, 30_000, 'answer before the rest of the body');
    assert.equal(answer.status, 400);
    assert.equal(answer.json.error.code, 'JSON_TOO_DEEP');
  } finally {
    exchange.socket.destroy();
  }
});

test('a media body keeps at most the ordinary body limit besides base64', async () => {
  const big = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: '+15550001111', type: 'image', caption: 'x'.repeat(2 * 1024 * 1024), base64: 'AAAA' });
  assert.equal(big.status, 413);
  assert.equal(big.body.error.code, 'PAYLOAD_TOO_LARGE');
  assert.match(big.body.error.message, /besides base64/);
});

test("the base64 of a media route's known nested media (sandbox history media[].base64) is not a side field", async () => {
  const item = (fields: string) => `{"session":"a","messages":0,"media":[{"type":"file","filename":"f.bin",${fields}}]}`;
  const large = 'A'.repeat(3 * 1024 * 1024);
  const parser = new StreamedJsonBody(8 << 20, 1 << 20);
  parser.push(Buffer.from(item(`"base64":"${large}"`)));
  assert.equal((parser.end() as { media: Array<{ base64: string }> }).media[0]!.base64.length, large.length);
  const tooLarge = (fields: string) => assert.throws(() => new StreamedJsonBody(8 << 20, 1 << 20).push(Buffer.from(fields)), (err: GatewayError) => err.code === 'PAYLOAD_TOO_LARGE');
  tooLarge(item(`"caption":"${large}","base64":"AAAA"`));
  tooLarge(`{"media":[{"x":{"base64":"${large}"}}]}`);
  tooLarge(`{"other":[{"base64":"${large}"}]}`);
  tooLarge(`{"media":[["base64","${large}"]]}`);
  tooLarge(`{"media":[{"base64":"A"}],"x":${'['.repeat(30)}${'1,'.repeat(600 * 1024)}1${']'.repeat(30)}}`);
});

test('sandbox history media over 1 MB follow the send rules, not the side-field cap (regression)', async () => {
  await pairedSession(daemon, 'history', '+15550170001');
  const bytes = Buffer.alloc(1536 * 1024, 7);
  const res = await daemon.request('POST', '/api/sandbox/sessions/history/history', { messages: 0, media: [{ type: 'file', filename: 'big.bin', base64: bytes.toString('base64') }] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
});

test("a client token over its rate limit is refused before its body is read", async () => {
  const rules = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedActions: 'send_typing', rateLimitPerMinute: 1 });
  assert.equal(rules.status, 200, JSON.stringify(rules.body));
  const token = (await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'visitor' })).body.data.token as string;
  const post = async () => {
    const res = await fetch(`${daemon.url}/api/sessions/a/messages/typing`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{not json' });
    return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
  };
  assert.deepEqual(await post(), { status: 400, code: 'INVALID_JSON' });
  assert.deepEqual(await post(), { status: 429, code: 'RATE_LIMITED' });
});
