import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector, type StreamedEvent } from '../../helpers/events.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

const status = async (name: string) => (await daemon.request('GET', `/api/sessions/${name}`)).body.data;

describe('session lifecycle', () => {
  test('create without start: exists, DISCONNECTED, reason null', async () => {
    const res = await daemon.request('POST', '/api/sessions', { name: 'idle' });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.name, 'idle');
    assert.equal(res.body.data.status, 'DISCONNECTED');
    assert.equal(res.body.data.statusReason, null);
    assert.equal(res.body.data.engine, 'sandbox');
    assert.match(res.body.data.createdAt, /^\d{4}-\d\d-\d\dT/);
    assert.ok(res.headers.get('x-request-id'));
  });

  test('create with start: CONNECTING / SCAN_QR with a QR that rotates', async () => {
    const res = await daemon.request('POST', '/api/sessions', { name: 'qr1', start: true });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.status, 'CONNECTING');
    assert.equal(res.body.data.statusReason, 'SCAN_QR');
    const qr = await daemon.request('GET', '/api/sessions/qr1/pairing/qr');
    assert.equal(qr.status, 200);
    assert.match(qr.body.data.qr, /^sandbox:qr1:/);
    assert.ok(Date.parse(qr.body.data.expiresAt) > Date.now());
    const image = await daemon.request('GET', '/api/sessions/qr1/pairing/qr?format=image');
    assert.match(image.body.data.image, /^data:image\/png;base64,/);
    const bad = await daemon.request('GET', '/api/sessions/qr1/pairing/qr?format=gif');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.details[0].path, '/format');
  });

  test('pairing: CONNECTED with phone, push name, platform and lid; QR then refused', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'pairme', start: true });
    const pair = await daemon.request('POST', '/api/sandbox/sessions/pairme/pair', { phoneNumber: '+15550002000', pushName: 'Alice' });
    assert.equal(pair.status, 200);
    assert.equal(pair.body.data.success, true);
    const session = await status('pairme');
    assert.equal(session.status, 'CONNECTED');
    assert.equal(session.statusReason, null);
    assert.equal(session.phoneNumber, '+15550002000');
    assert.equal(session.pushName, 'Alice');
    assert.equal(session.platform, 'consumer');
    assert.match(session.lid, /^\d+@lid$/);
    const qr = await daemon.request('GET', '/api/sessions/pairme/pairing/qr');
    assert.equal(qr.status, 409);
    assert.equal(qr.body.error.code, 'SESSION_ALREADY_PAIRED');
    const again = await daemon.request('POST', '/api/sandbox/sessions/pairme/pair', {});
    assert.equal(again.body.error.code, 'SESSION_ALREADY_PAIRED');
  });

  test('business account pairs with platform smba and a business name', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'shop', start: true });
    await daemon.request('POST', '/api/sandbox/sessions/shop/pair', { phoneNumber: '+15550002001', business: true, businessName: 'Shop Ltd' });
    const session = await status('shop');
    assert.equal(session.platform, 'smba');
    assert.equal(session.businessName, 'Shop Ltd');
  });

  test('pairing code: 8 characters, pairing with the code connects with that number', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'bycode' });
    const res = await daemon.request('POST', '/api/sessions/bycode/pairing/code', { phoneNumber: '+44 20 7946 0001' });
    assert.equal(res.status, 200);
    assert.match(res.body.data.code, /^[1-9A-HJ-NP-TV-Z]{8}$/);
    assert.equal(res.body.data.phoneNumber, '+442079460001');
    const wrong = await daemon.request('POST', '/api/sandbox/sessions/bycode/pair', { code: 'AAAA-AAAA' });
    assert.equal(wrong.status, 400);
    const ok = await daemon.request('POST', '/api/sandbox/sessions/bycode/pair', { code: res.body.data.code });
    assert.equal(ok.status, 200);
    assert.equal((await status('bycode')).phoneNumber, '+442079460001');
    const bad = await daemon.request('POST', '/api/sessions/bycode/pairing/code', { phoneNumber: 'call me' });
    assert.equal(bad.status, 400);
  });

  test('stop → DISCONNECTED/MANUAL_STOP keeping credentials; start reconnects without a QR', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'stopper', start: true });
    await daemon.request('POST', '/api/sandbox/sessions/stopper/pair', { phoneNumber: '+15550002002' });
    const stop = await daemon.request('POST', '/api/sessions/stopper/stop');
    assert.equal(stop.status, 200);
    assert.deepEqual(Object.keys(stop.body.data).sort(), ['message', 'success']);
    let session = await status('stopper');
    assert.equal(session.status, 'DISCONNECTED');
    assert.equal(session.statusReason, 'MANUAL_STOP');
    assert.equal(session.phoneNumber, '+15550002002');
    const qr = await daemon.request('GET', '/api/sessions/stopper/pairing/qr');
    assert.equal(qr.body.error.code, 'SESSION_NOT_STARTED');
    await daemon.request('POST', '/api/sessions/stopper/start');
    session = await waitFor(async () => ((await status('stopper')).status === 'CONNECTED' ? status('stopper') : null), 3000, 'stopper CONNECTED');
    assert.equal(session.statusReason, null);
    const twice = await daemon.request('POST', '/api/sessions/stopper/start');
    assert.equal(twice.status, 200);
    assert.match(twice.body.data.message, /already running/);
  });

  test('restart of a paired session ends CONNECTED; of an unpaired one, CONNECTING/SCAN_QR', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'rs', start: true });
    await daemon.request('POST', '/api/sandbox/sessions/rs/pair', { phoneNumber: '+15550002003' });
    assert.equal((await daemon.request('POST', '/api/sessions/rs/restart')).status, 200);
    await waitFor(async () => (await status('rs')).status === 'CONNECTED', 3000, 'rs CONNECTED');
    await daemon.request('POST', '/api/sessions', { name: 'rs2', start: true });
    await daemon.request('POST', '/api/sessions/rs2/restart');
    const s2 = await status('rs2');
    assert.equal(s2.status, 'CONNECTING');
    assert.equal(s2.statusReason, 'SCAN_QR');
  });

  test('logout → DISCONNECTED/LOGGED_OUT, account cleared, start needs a new pairing', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'lo', start: true });
    await daemon.request('POST', '/api/sandbox/sessions/lo/pair', { phoneNumber: '+15550002004' });
    assert.equal((await daemon.request('POST', '/api/sessions/lo/logout')).status, 200);
    let session = await status('lo');
    assert.equal(session.status, 'DISCONNECTED');
    assert.equal(session.statusReason, 'LOGGED_OUT');
    assert.equal(session.phoneNumber, undefined);
    await daemon.request('POST', '/api/sessions/lo/start');
    session = await status('lo');
    assert.equal(session.status, 'CONNECTING');
    assert.equal(session.statusReason, 'SCAN_QR');
  });

  test('delete removes the session; later calls are 404', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'gone', start: true });
    const res = await daemon.request('DELETE', '/api/sessions/gone');
    assert.equal(res.status, 200);
    assert.equal(res.body.data.success, true);
    for (const [method, path] of [
      ['GET', '/api/sessions/gone'],
      ['POST', '/api/sessions/gone/start'],
      ['DELETE', '/api/sessions/gone'],
      ['GET', '/api/sessions/gone/pairing/qr'],
    ] as const) {
      const r = await daemon.request(method, path);
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.equal(r.body.error.code, 'SESSION_NOT_FOUND');
    }
  });

  test('network drops: AUTO_RECONNECT reconnects by itself; LOGGED_OUT clears; TEMPORARY_BAN stays down', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'drops', start: true });
    await daemon.request('POST', '/api/sandbox/sessions/drops/pair', { phoneNumber: '+15550002005' });
    await daemon.request('POST', '/api/sandbox/sessions/drops/disconnect', { reason: 'AUTO_RECONNECT' });
    const during = await status('drops');
    assert.equal(during.status, 'CONNECTING');
    assert.equal(during.statusReason, 'AUTO_RECONNECT');
    await waitFor(async () => (await status('drops')).status === 'CONNECTED', 5000, 'reconnected');

    await daemon.request('POST', '/api/sandbox/sessions/drops/disconnect', { reason: 'TEMPORARY_BAN' });
    assert.equal((await status('drops')).statusReason, 'TEMPORARY_BAN');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await status('drops')).status, 'DISCONNECTED');

    await daemon.request('POST', '/api/sessions/drops/start');
    await waitFor(async () => (await status('drops')).status === 'CONNECTED', 3000, 'connected again');
    await daemon.request('POST', '/api/sandbox/sessions/drops/disconnect', { reason: 'LOGGED_OUT' });
    const out = await status('drops');
    assert.equal(out.statusReason, 'LOGGED_OUT');
    assert.equal(out.phoneNumber, undefined);
  });

  test('QR expiry: after the configured rotations the session ends DISCONNECTED/QR_TIMEOUT', async () => {
    const quick = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' }, config: 'sessions:\n  qrRotationSeconds: 0.1\n  qrMaxRotations: 3\n' });
    try {
      await quick.request('POST', '/api/sessions', { name: 'slow', start: true });
      const first = (await quick.request('GET', '/api/sessions/slow/pairing/qr')).body.data.qr;
      await waitFor(async () => {
        const qr = await quick.request('GET', '/api/sessions/slow/pairing/qr');
        return qr.status === 200 && qr.body.data.qr !== first;
      }, 2000, 'a rotated QR');
      const ended: any = await waitFor(async () => {
        const s = (await quick.request('GET', '/api/sessions/slow')).body.data;
        return s.statusReason === 'QR_TIMEOUT' ? s : null;
      }, 3000, 'QR_TIMEOUT');
      assert.equal(ended.status, 'DISCONNECTED');
    } finally {
      await quick.cleanup();
    }
  });
});

describe('validation and errors', () => {
  test('name regex and length', async () => {
    for (const name of ['-lead', '.dot', 'sp ace', 'a'.repeat(65), '', 'ünï']) {
      const res = await daemon.request('POST', '/api/sessions', { name });
      assert.equal(res.status, 400, JSON.stringify(name));
      assert.equal(res.body.error.code, 'VALIDATION_FAILED');
      assert.equal(res.body.error.details[0].path, '/name');
    }
    for (const name of ['a', 'A1._-x', 'z'.repeat(64)]) {
      const res = await daemon.request('POST', '/api/sessions', { name });
      assert.equal(res.status, 201, name);
    }
  });

  test('duplicate name → 409 SESSION_EXISTS; unknown → 404', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'dup' });
    const res = await daemon.request('POST', '/api/sessions', { name: 'dup' });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'SESSION_EXISTS');
    const unknown = await daemon.request('GET', '/api/sessions/nobody');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'SESSION_NOT_FOUND');
  });

  test('bad bodies: missing name, wrong types, unknown fields, invalid JSON, wrong content type', async () => {
    const missing = await daemon.request('POST', '/api/sessions', {});
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.error.details, [{ path: '/name', message: 'is required' }]);
    const wrongType = await daemon.request('POST', '/api/sessions', { name: 'x1', start: 'yes' });
    assert.equal(wrongType.body.error.details[0].path, '/start');
    const unknownField = await daemon.request('POST', '/api/sessions', { name: 'x2', colour: 'red' });
    assert.equal(unknownField.body.error.details[0].path, '/colour');
    const badProxy = await daemon.request('POST', '/api/sessions', { name: 'x3', proxy: 'ftp://proxy' });
    assert.equal(badProxy.body.error.details[0].path, '/proxy');
    const hostless = await daemon.request('POST', '/api/sessions', { name: 'x4', proxy: 'socks5://' });
    assert.equal(hostless.status, 400);
    assert.equal(hostless.body.error.details[0].path, '/proxy');
    const invalid = await daemon.request('POST', '/api/sessions', '{"name":');
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.error.code, 'INVALID_JSON');
    const text = await fetch(daemon.url + '/api/sessions', {
      method: 'POST',
      headers: { Authorization: `Bearer ${daemon.masterKey}`, 'Content-Type': 'text/plain' },
      body: 'name=x',
    });
    assert.equal(text.status, 415);
    assert.equal(((await text.json()) as any).error.code, 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('proxy and config are stored; the proxy password is masked', async () => {
    const res = await daemon.request('POST', '/api/sessions', {
      name: 'proxied',
      proxy: 'socks5://user:secret@proxy.example.com:1080',
      config: { safeMode: true },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.proxy, 'socks5://user:***@proxy.example.com:1080');
    assert.deepEqual(res.body.data.config, { safeMode: true });
  });

  test('body over the limit → 413 PAYLOAD_TOO_LARGE, before the body is read', async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((done, fail) => {
      const req = httpRequest(daemon.url + '/api/sessions', {
        method: 'POST',
        headers: { Authorization: `Bearer ${daemon.masterKey}`, 'Content-Type': 'application/json', 'Content-Length': String(200 * 1024 * 1024) },
      });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => {
          done({ status: res.statusCode!, body: text });
          req.destroy();
        });
      });
      req.on('error', fail);
      req.write('{"name":"');
    });
    assert.equal(status, 413);
    assert.equal(JSON.parse(body).error.code, 'PAYLOAD_TOO_LARGE');
  });

  test('unknown route → 404 ROUTE_NOT_FOUND in the error shape; wrong method → 405', async () => {
    const res = await daemon.request('GET', '/api/nothing-here');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'ROUTE_NOT_FOUND');
    const method = await daemon.request('PUT', '/api/sessions');
    assert.equal(method.status, 405);
    assert.equal(method.body.error.code, 'METHOD_NOT_ALLOWED');
  });

  test('list paging: limit/offset and X-Total-Count', async () => {
    const all = await daemon.request('GET', '/api/sessions');
    const total = Number(all.headers.get('x-total-count'));
    assert.equal(total, all.body.data.length);
    const page = await daemon.request('GET', '/api/sessions?limit=2&offset=1');
    assert.equal(page.body.data.length, 2);
    assert.equal(page.body.data[0].name, all.body.data[1].name);
    const bad = await daemon.request('GET', '/api/sessions?limit=0');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.details[0].path, '/limit');
  });
});

/** Status changes as {status, statusReason, previousStatus, previousStatusReason}, in the order they were published. */
/** the session.status payloads, `lastError` without its time */
const transitions = (events: EventCollector) =>
  events
    .all((e) => e.event === 'session.status')
    .map(({ payload: { lastError, ...change } }) => (lastError ? { ...change, lastError: { code: lastError.code, message: lastError.message } } : change));
const isStatus = (status: string, reason: string | null) => (e: StreamedEvent) =>
  e.event === 'session.status' && e.payload.status === status && e.payload.statusReason === reason;

describe('session.* events', () => {
  test('session.status carries the previous status and reason of every transition; session.qr is {qr, expiresAt}', async () => {
    const events = await collectEvents(daemon, 'session=ev-flow');
    try {
      await daemon.request('POST', '/api/sessions', { name: 'ev-flow', start: true });
      const qrEvent = await events.next((e) => e.event === 'session.qr', 5000, 'session.qr');
      assert.equal(qrEvent.session, 'ev-flow');
      assert.deepEqual(Object.keys(qrEvent.payload).sort(), ['expiresAt', 'qr']);
      const current = (await daemon.request('GET', '/api/sessions/ev-flow/pairing/qr')).body.data;
      assert.equal(qrEvent.payload.qr, current.qr, 'the event carries the QR the route serves');
      assert.equal(qrEvent.payload.expiresAt, current.expiresAt);
      assert.ok(Date.parse(qrEvent.payload.expiresAt) > Date.parse(qrEvent.timestamp), 'expiresAt lies after the event');

      await daemon.request('POST', '/api/sandbox/sessions/ev-flow/pair', { phoneNumber: '+15550002100', pushName: 'Eve' });
      const connected = await events.next((e) => e.event === 'session.connected', 5000, 'session.connected');
      assert.equal(connected.payload.phoneNumber, '+15550002100');
      assert.equal(connected.payload.pushName, 'Eve');
      assert.equal(connected.payload.platform, 'consumer');
      assert.match(connected.payload.lid, /^\d+@lid$/);

      await daemon.request('POST', '/api/sessions/ev-flow/stop');
      await events.next(isStatus('DISCONNECTED', 'MANUAL_STOP'), 5000, 'MANUAL_STOP');
      await daemon.request('POST', '/api/sessions/ev-flow/start');
      await events.next((e) => isStatus('CONNECTED', null)(e) && e.payload.previousStatusReason === null, 5000, 'CONNECTED again');
      // session.connected follows the status change; on a loaded machine it may not have been read yet
      await waitFor(() => events.all((e) => e.event === 'session.connected').length >= 2, 5000, 'the second session.connected');

      assert.deepEqual(transitions(events), [
        { status: 'CONNECTING', statusReason: 'SCAN_QR', previousStatus: 'DISCONNECTED', previousStatusReason: null },
        { status: 'CONNECTED', statusReason: null, previousStatus: 'CONNECTING', previousStatusReason: 'SCAN_QR' },
        { status: 'DISCONNECTED', statusReason: 'MANUAL_STOP', previousStatus: 'CONNECTED', previousStatusReason: null },
        { status: 'CONNECTING', statusReason: null, previousStatus: 'DISCONNECTED', previousStatusReason: 'MANUAL_STOP' },
        { status: 'CONNECTED', statusReason: null, previousStatus: 'CONNECTING', previousStatusReason: null },
      ]);
      assert.equal(events.all((e) => e.event === 'session.qr').length, 1, 'a paired session reconnects without a QR');
      assert.equal(events.all((e) => e.event === 'session.connected').length, 2);
    } finally {
      events.close();
    }
  });

  test('session.logged_out: {reason: LOGOUT} on logout, {reason: UNLINKED, detail} when the phone unlinks', async () => {
    const events = await collectEvents(daemon, 'session=ev-out');
    try {
      await daemon.request('POST', '/api/sessions', { name: 'ev-out', start: true });
      await daemon.request('POST', '/api/sandbox/sessions/ev-out/pair', { phoneNumber: '+15550002101' });
      await events.next((e) => e.event === 'session.connected', 5000, 'connected');

      assert.equal((await daemon.request('POST', '/api/sessions/ev-out/logout')).status, 200);
      const byLogout = await events.next((e) => e.event === 'session.logged_out', 5000, 'logged_out after logout');
      assert.deepEqual(byLogout.payload, { reason: 'LOGOUT' });
      const change = events.all((e) => e.event === 'session.status').at(-1)!;
      assert.deepEqual(change.payload, { status: 'DISCONNECTED', statusReason: 'LOGGED_OUT', previousStatus: 'CONNECTED', previousStatusReason: null });
      assert.ok(events.events.indexOf(change) < events.events.indexOf(byLogout), 'the status change is published before session.logged_out');

      await daemon.request('POST', '/api/sessions/ev-out/start');
      await daemon.request('POST', '/api/sandbox/sessions/ev-out/pair', { phoneNumber: '+15550002101' });
      await waitFor(() => events.all((e) => e.event === 'session.connected').length === 2, 5000, 'connected again');
      assert.equal((await daemon.request('POST', '/api/sandbox/sessions/ev-out/disconnect', { reason: 'LOGGED_OUT' })).status, 200);
      const unlinked = await events.next((e) => e.event === 'session.logged_out' && e.payload.reason === 'UNLINKED', 5000, 'logged_out after unlink');
      assert.deepEqual(unlinked.payload, { reason: 'UNLINKED', detail: 'unlinked from the phone' });
      assert.deepEqual(transitions(events).at(-1), {
        status: 'DISCONNECTED',
        statusReason: 'LOGGED_OUT',
        previousStatus: 'CONNECTED',
        previousStatusReason: null,
        lastError: { code: 'LOGGED_OUT', message: 'unlinked from the phone' },
      });
      assert.equal(events.all((e) => e.event === 'session.logged_out').length, 2);
      assert.equal((await status('ev-out')).phoneNumber, undefined);
    } finally {
      events.close();
    }
  });
});

describe('sandbox disconnect reasons STREAM_ERROR and FAILED', () => {
  test('STREAM_ERROR: DISCONNECTED/STREAM_ERROR at once, then CONNECTING/AUTO_RECONNECT and CONNECTED by itself, credentials kept', async () => {
    await pairedSession(daemon, 'streamy', '+15550002102');
    const events = await collectEvents(daemon, 'session=streamy&events=session.status,session.qr,session.connected');
    try {
      const drop = await daemon.request('POST', '/api/sandbox/sessions/streamy/disconnect', { reason: 'STREAM_ERROR' });
      assert.equal(drop.status, 200);
      assert.equal(drop.body.data.success, true);
      const during = await status('streamy');
      assert.equal(during.status, 'DISCONNECTED');
      assert.equal(during.statusReason, 'STREAM_ERROR');
      assert.equal(during.phoneNumber, '+15550002102', 'a stream error keeps the credentials');

      const back: any = await waitFor(async () => {
        const s = await status('streamy');
        return s.status === 'CONNECTED' ? s : null;
      }, 10_000, 'streamy reconnected');
      assert.equal(back.statusReason, null);
      assert.equal(back.phoneNumber, '+15550002102');
      await events.next((e) => e.event === 'session.connected', 5000, 'session.connected after the reconnect');
      assert.deepEqual(transitions(events), [
        { status: 'DISCONNECTED', statusReason: 'STREAM_ERROR', previousStatus: 'CONNECTED', previousStatusReason: null, lastError: { code: 'STREAM_ERROR', message: 'dropped by the sandbox network' } },
        { status: 'CONNECTING', statusReason: 'AUTO_RECONNECT', previousStatus: 'DISCONNECTED', previousStatusReason: 'STREAM_ERROR' },
        { status: 'CONNECTED', statusReason: null, previousStatus: 'CONNECTING', previousStatusReason: 'AUTO_RECONNECT' },
      ]);
      assert.equal(events.all((e) => e.event === 'session.qr').length, 0, 'no new pairing');
    } finally {
      events.close();
    }
  });

  test('FAILED: DISCONNECTED/FAILED and stays down (not running) until started; credentials kept', async () => {
    await pairedSession(daemon, 'failing', '+15550002103');
    const events = await collectEvents(daemon, 'session=failing&events=session.status');
    try {
      const drop = await daemon.request('POST', '/api/sandbox/sessions/failing/disconnect', { reason: 'FAILED' });
      assert.equal(drop.status, 200);
      const down = await status('failing');
      assert.equal(down.status, 'DISCONNECTED');
      assert.equal(down.statusReason, 'FAILED');
      assert.equal(down.phoneNumber, '+15550002103');
      await events.next(isStatus('DISCONNECTED', 'FAILED'), 5000, 'FAILED event');

      // nothing runs any more: no reconnect is pending, the sandbox cannot drop it again, there is no QR
      const qr = await daemon.request('GET', '/api/sessions/failing/pairing/qr');
      assert.equal(qr.status, 409);
      assert.equal(qr.body.error.code, 'SESSION_NOT_STARTED');
      const again = await daemon.request('POST', '/api/sandbox/sessions/failing/disconnect', { reason: 'FAILED' });
      assert.equal(again.body.error.code, 'SESSION_NOT_STARTED');

      const start = await daemon.request('POST', '/api/sessions/failing/start');
      assert.equal(start.status, 200);
      assert.doesNotMatch(start.body.data.message, /already running/);
      await waitFor(async () => (await status('failing')).status === 'CONNECTED', 5000, 'failing CONNECTED after start');
      assert.deepEqual(transitions(events).slice(0, 2), [
        { status: 'DISCONNECTED', statusReason: 'FAILED', previousStatus: 'CONNECTED', previousStatusReason: null, lastError: { code: 'LOGIN_REFUSED', message: 'dropped by the sandbox network' } },
        { status: 'CONNECTING', statusReason: null, previousStatus: 'DISCONNECTED', previousStatusReason: 'FAILED' },
      ]);
    } finally {
      events.close();
    }
  });
});

describe('sandbox faults of session health', () => {
  test('disconnect takes exactly one of reason and logoutReason; the silence fault needs a connected session and a known `until`', async () => {
    await pairedSession(daemon, 'faulty', '+15550002104');
    for (const body of [{}, { reason: 'FAILED', logoutReason: 'banned' }]) {
      const refused = await daemon.request('POST', '/api/sandbox/sessions/faulty/disconnect', body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.error.code, 'VALIDATION_FAILED');
    }
    assert.equal((await daemon.request('POST', '/api/sandbox/sessions/faulty/disconnect', { logoutReason: 'expelled' })).status, 400);
    for (const body of [{}, { until: 'forever' }, { until: 'restart', extra: 1 }]) {
      assert.equal((await daemon.request('POST', '/api/sandbox/sessions/faulty/faults/silence', body)).status, 400, JSON.stringify(body));
    }
    assert.equal((await status('faulty')).status, 'CONNECTED', 'refused faults change nothing');
    const banned = await daemon.request('POST', '/api/sandbox/sessions/faulty/disconnect', { logoutReason: 'locked' });
    assert.equal(banned.status, 200);
    const view = await status('faulty');
    assert.deepEqual([view.status, view.statusReason, view.lastError.code, view.lastError.logoutReason, view.health], ['DISCONNECTED', 'TEMPORARY_BAN', 'ACCOUNT_LOCKED', 'locked', null]);
    const silent = await daemon.request('POST', '/api/sandbox/sessions/faulty/faults/silence', { until: 'reconnect' });
    assert.equal(silent.status, 409);
    assert.equal(silent.body.error.code, 'SESSION_NOT_STARTED');
    // a session key (not the master key) cannot inject faults
    const key = await daemon.request('POST', '/api/admin/keys', { name: 'faulty-key', scopes: ['sessions:manage'], sessions: ['faulty'] });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const asKey = await fetch(`${daemon.url}/api/sandbox/sessions/faulty/faults/silence`, { method: 'POST', headers: { authorization: `Bearer ${key.body.data.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ until: 'restart' }) });
    assert.equal(asKey.status, 403);
  });
});

describe('X-Request-Id', () => {
  test('a sane caller id is echoed; a missing or unacceptable one is replaced by a new id', async () => {
    const own = await daemon.request('GET', '/api/sessions', undefined, undefined, { 'X-Request-Id': 'trace-42.a:b_c' });
    assert.equal(own.headers.get('x-request-id'), 'trace-42.a:b_c');
    const onError = await daemon.request('GET', '/api/sessions/nobody-here', undefined, undefined, { 'X-Request-Id': 'err-1' });
    assert.equal(onError.status, 404);
    assert.equal(onError.headers.get('x-request-id'), 'err-1', 'error responses echo it too');

    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const none1 = (await daemon.request('GET', '/api/sessions')).headers.get('x-request-id');
    const none2 = (await daemon.request('GET', '/api/sessions')).headers.get('x-request-id');
    assert.match(none1 ?? '', uuid);
    assert.match(none2 ?? '', uuid);
    assert.notEqual(none1, none2, 'each request gets its own id');
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '<script>']) {
      const res = await daemon.request('GET', '/api/sessions', undefined, undefined, { 'X-Request-Id': bad });
      const id = res.headers.get('x-request-id');
      assert.notEqual(id, bad);
      assert.match(id ?? '', uuid, JSON.stringify(bad));
    }
    const longest = 'y'.repeat(128);
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, undefined, { 'X-Request-Id': longest })).headers.get('x-request-id'), longest);
  });
});
