// A session's `config` is closed: only engine, safeMode and markOnlineOnConnect, each of its type; anything else
// (which used to be stored as given, of any size, and echoed on every read) is a 400 naming it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

test('unknown config keys, of any size, are refused with 400 naming them; nothing is stored', async () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [{ blob: 'x'.repeat(100_000) }, '/config/blob', /is not a known field/],
    [{ safeMode: true, nested: { deep: [1, 2, 3] } }, '/config/nested', /is not a known field/],
    [{ safeMode: 'yes' }, '/config/safeMode', /must be boolean/],
    [{ engine: 'whatsmeow' }, '/config/engine', /must be one of/],
  ];
  let n = 0;
  for (const [config, pointer, message] of cases) {
    const res = await daemon.request('POST', '/api/sessions', { name: `s${n++}`, engine: 'sandbox', config });
    assert.equal(res.status, 400, `${pointer}: ${JSON.stringify(res.body).slice(0, 300)}`);
    assert.equal(res.body.error.code, 'VALIDATION_FAILED');
    const detail = res.body.error.details.find((d: { path: string }) => d.path === pointer);
    assert.ok(detail, JSON.stringify(res.body.error.details));
    assert.match(detail.message, message);
  }
  const proto = await daemon.request('POST', '/api/sessions', '{"name":"p","engine":"sandbox","config":{"__proto__":{"safeMode":true}}}');
  assert.equal(proto.status, 400, JSON.stringify(proto.body));
  assert.equal(proto.body.error.details[0].path, '/config/__proto__');
  assert.deepEqual((await daemon.request('GET', '/api/sessions')).body.data, []);
});

test('the documented settings are stored and shown', async () => {
  const res = await daemon.request('POST', '/api/sessions', { name: 'ok', config: { engine: 'sandbox', safeMode: true, markOnlineOnConnect: false } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body.data.engine, 'sandbox');
  assert.deepEqual(res.body.data.config, { safeMode: true, markOnlineOnConnect: false });
});
