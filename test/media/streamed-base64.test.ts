// A large media body is parsed while it streams in, its top-level `base64` decoded on the way (src/http/middleware/
// streamed-body.ts, src/media/base64.ts). Every answer must equal the text path's: JSON.parse, then decodeBase64Field.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { GatewayError } from '../../src/errors.js';
import { decodeBase64Field, StreamedBase64, type Base64Decode } from '../../src/media/base64.js';
import { StreamedJsonBody } from '../../src/http/middleware/streamed-body.js';

const SEND: Base64Decode = { mixedAlphabets: false, maxBytes: 70 * 1024 * 1024, tooLarge: 'the media is larger than 70 MB' };
const PICTURE: Base64Decode = { mixedAlphabets: true, maxBytes: 64, tooLarge: 'a picture may be at most 64 bytes' };

type Outcome = { json: 'invalid' } | { json: 'ok'; rest: unknown; field: { data: string; contentType?: string } | { error: string; code: string } | 'absent' | 'not a string' };

/** What a body gives: through JSON.parse and the text decoder, or through the streamed parser fed in the given pieces. */
function outcome(body: Buffer, options: Base64Decode, pieces?: number[]): Outcome {
  let value: unknown;
  try {
    if (pieces) {
      const parser = new StreamedJsonBody(body.length);
      let at = 0;
      for (const size of [...pieces, body.length]) {
        parser.push(body.subarray(at, Math.min(body.length, at + size)));
        at = Math.min(body.length, at + size);
        if (at === body.length) break;
      }
      value = parser.end();
    } else {
      const text = new TextDecoder().decode(body);
      value = text.trim() === '' ? undefined : JSON.parse(text);
    }
  } catch {
    return { json: 'invalid' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { json: 'ok', rest: value, field: 'absent' };
  const { base64, ...rest } = value as Record<string, unknown>;
  if (base64 === undefined) return { json: 'ok', rest, field: 'absent' };
  if (typeof base64 !== 'string' && !(base64 instanceof StreamedBase64)) return { json: 'ok', rest, field: 'not a string' };
  try {
    const decoded = decodeBase64Field(base64, options);
    return { json: 'ok', rest, field: { data: decoded.data.toString('hex'), ...(decoded.contentType ? { contentType: decoded.contentType } : {}) } };
  } catch (err) {
    return { json: 'ok', rest, field: { error: (err as Error).message, code: (err as GatewayError).code } };
  }
}

function assertSame(body: Buffer | string, options: Base64Decode = SEND, pieceSizes: number[][] = [[1], [2], [3], [7], [64], [65536]]): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const expected = outcome(bytes, options);
  for (const sizes of pieceSizes) {
    const pieces = Array.from({ length: bytes.length }, (_, i) => sizes[i % sizes.length]!);
    assert.deepEqual(outcome(bytes, options, pieces), expected, `${bytes.toString('latin1').slice(0, 300)} in pieces of ${sizes.join(',')}`);
  }
}

test('well-formed base64 decodes to the same bytes, in any chunking, both alphabets, with padding and line breaks', () => {
  for (const size of [0, 1, 2, 3, 4, 5, 100, 1000]) {
    const data = randomBytes(size);
    const standard = data.toString('base64');
    assertSame(JSON.stringify({ session: 'a', type: 'image', base64: standard, caption: 'x' }));
    assertSame(JSON.stringify({ base64: data.toString('base64url') }));
    assertSame(JSON.stringify({ base64: standard.replace(/=+$/, '') }));
    assertSame(JSON.stringify({ base64: standard.replace(/(.{76})/g, '$1\r\n') }));
    assertSame(JSON.stringify({ base64: `${standard}\n \t` }));
    assertSame(JSON.stringify({ base64: standard }).replace(/\//g, '\\/'));
  }
});

test('the top-level base64 string arrives decoded, not as text', () => {
  const data = randomBytes(1000);
  const parser = new StreamedJsonBody(2000);
  const body = Buffer.from(JSON.stringify({ session: 'a', base64: `data:image/png;base64,${data.toString('base64')}` }));
  parser.push(body.subarray(0, 500));
  parser.push(body.subarray(500));
  const value = parser.end() as { session: string; base64: StreamedBase64 };
  assert.equal(value.session, 'a');
  assert.ok(value.base64 instanceof StreamedBase64);
  assert.deepEqual(value.base64.data, data);
  assert.equal(value.base64.contentType, 'image/png');
  assert.equal(value.base64.standIn, 'data:image/png;b');
});

test('text longer than the decoder stage decodes the same, including a large value among other large strings', () => {
  const data = randomBytes(300_000);
  const pieces = [[7], [4096, 3], [65536], [100_003]];
  assertSame(JSON.stringify({ session: 'a', base64: data.toString('base64'), caption: 'x' }), SEND, pieces);
  assertSame(JSON.stringify({ base64: data.toString('base64url').replace(/(.{76})/g, '$1\n') }), SEND, pieces);
  assertSame(JSON.stringify({ base64: `${data.toString('base64')}!` }), SEND, pieces);
  assertSame(JSON.stringify({ text: 'x\\'.repeat(100_000), base64: data.toString('base64') }), SEND, pieces);
});

test('a data: URI gives its type, escaped or not; a prefix past 200 characters is not one', () => {
  const data = randomBytes(300).toString('base64');
  assertSame(JSON.stringify({ base64: `data:image/png;base64,${data}` }));
  assertSame(JSON.stringify({ base64: `data:image/png;base64,${data}` }).replace(/\//g, '\\/'));
  assertSame(JSON.stringify({ base64: `data:;base64,${data}` }));
  assertSame(JSON.stringify({ base64: `data:image/png;name=é;base64,${data}` }));
  assertSame(JSON.stringify({ base64: `data:image/png;${'p'.repeat(190)},${data}` }));
  assertSame(JSON.stringify({ base64: `data:image/png;${'p'.repeat(200)},${data}` }));
});

test('text that is not base64 gets the same 400 (or 413), and mixed alphabets the same per-route answer', () => {
  const cases = ['', '====', 'QUJD===', 'QQ=', 'QQ=\n', 'QUJD=A', 'QUJD==\nx', 'QU JD', 'QUJD\u00a0', 'QUJD=\u3000', 'QUJDé', 'Q', 'QUJD-_+/', '\n\n\n', '\u2028', 'QUJD\ud800'];
  for (const text of cases) {
    assertSame(JSON.stringify({ base64: text }));
    assertSame(JSON.stringify({ base64: text }), PICTURE);
  }
  assertSame(JSON.stringify({ base64: randomBytes(200).toString('base64') }), PICTURE); // 413: larger than the picture limit
  assertSame(JSON.stringify({ base64: 'QUJD\\u0041\\u000a' }).replace(/\\\\/g, '\\'));
});

test('JSON errors inside the streamed string are JSON errors, as JSON.parse says', () => {
  for (const body of ['{"base64":"QUJD\nQUJD"}', '{"base64":"QUJD\tQUJD"}', '{"base64":"QU\\x"}', '{"base64":"QU\\u12G4"}', '{"base64":"QUJD', '{"base64":"QUJD"', '{"base64":"\u0001"}', '{"base64":"QUJD== \u0000"}']) {
    assertSame(body);
  }
});

test('only a top-level base64 value is streamed; keys with escapes, nested and repeated ones read as JSON.parse reads them', () => {
  const a = randomBytes(30).toString('base64');
  const b = randomBytes(30).toString('base64');
  assertSame(`{"base64":"${a}","base64":"${b}"}`);
  assertSame(`{"base\\u0036\\u0034":"${a}"}`);
  assertSame(`{"nested":{"base64":"${a}"},"base64":"${b}"}`);
  assertSame(`{"list":["base64",":","${a}"],"base64" : "${b}" }`);
  assertSame(`{"caption":"base64","text":"a \\"base64\\": \\\\","base64":"${b}"}`);
  assertSame(`{"base64":5}`);
  assertSame(`{"base64":null}`);
  assertSame(`["base64","${a}"]`);
  assertSame(`{"base64":"${a}"`);
  assertSame(`{"base64":"${a}"}}`);
  assertSame(`\ufeff{"base64":"${a}"}`);
  assertSame('   ');
});

test('random bodies: the streamed parser and the text path agree', () => {
  const alphabet = ['A', 'z', '9', '+', '/', '-', '_', '=', '\\n', '\\r', '\\/', '\\u0041', ' ', '\\t', 'é', '"', '\\\\', '\n', '\\u00a0'];
  for (let n = 0; n < 300; n++) {
    const length = Math.floor(Math.random() * 40);
    let text = '';
    for (let i = 0; i < length; i++) text += Math.random() < 0.7 ? 'ABCDabcd0123'[Math.floor(Math.random() * 12)] : alphabet[Math.floor(Math.random() * alphabet.length)];
    const body = `{"session":"a","base64":"${text}"}`;
    assertSame(body, n % 2 ? SEND : PICTURE, [[1], [3], [5, 1, 9], [1000]]);
  }
});
