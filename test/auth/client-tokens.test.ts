import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

const A = '+15550200001';
const B = '+15550200002';
const ORIGIN = 'http://app.example.test';
const ALL_ACTIONS = 'send_message,send_reaction,send_typing,send_seen,read_presence,subscribe_presence,read_contact';

let daemon: TestDaemon;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' }, config: 'clientTokens:\n  maxTtlSeconds: 3600\n  rateWindowSeconds: 2\n' });
  await pairedSession(daemon, 'a', A);
  await pairedSession(daemon, 'b', B);
});
after(() => daemon.cleanup());

async function rules(session: string, body: Record<string, unknown>) {
  const res = await daemon.request('PUT', `/api/sessions/${session}/client-rules`, body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

async function mint(session = 'a', ephemeralId = 'visitor-1', ttlSeconds?: number): Promise<string> {
  const res = await daemon.request('POST', '/api/client-tokens', { session, ephemeralId, ...(ttlSeconds ? { ttlSeconds } : {}) });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.token;
}

const asClient = (token: string, method: string, path: string, body?: unknown, origin: string | null = ORIGIN) =>
  daemon.request(method, path, body, token, origin ? { Origin: origin } : {});

const sendText = (token: string, chatId = B, session = 'a', origin: string | null = ORIGIN) =>
  asClient(token, 'POST', '/api/messages/send', { session, chatId, type: 'text', text: 'from the browser' }, origin);

describe('minting', () => {
  test('token shape, expiry and defaults', async () => {
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS });
    const res = await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'visitor-1' });
    assert.equal(res.status, 201);
    const { token, expiresAt, session, ephemeralId } = res.body.data;
    assert.match(token, /^svc_ct_[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal(session, 'a');
    assert.equal(ephemeralId, 'visitor-1');
    const ttl = (Date.parse(expiresAt) - Date.now()) / 1000;
    assert.ok(ttl > 890 && ttl <= 900, `default lifetime 900 s, got ${ttl}`);
    const header = JSON.parse(Buffer.from(token.slice(7).split('.')[0], 'base64url').toString());
    assert.deepEqual(header, { alg: 'HS256', typ: 'JWT' });
    const claims = JSON.parse(Buffer.from(token.slice(7).split('.')[1], 'base64url').toString());
    assert.equal(claims.sid, 'a');
    assert.equal(claims.eph, 'visitor-1');
    assert.ok(claims.jti && claims.iat && claims.exp);
  });

  test('400: invalid body, missing field, lifetime out of range (1 and max pass; 0 and max+1 fail)', async () => {
    const missing = await daemon.request('POST', '/api/client-tokens', { session: 'a' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.details[0].path, '/ephemeralId');
    const invalid = await daemon.request('POST', '/api/client-tokens', '{"session":');
    assert.equal(invalid.status, 400);
    for (const ttlSeconds of [0, 3601, -5]) {
      const res = await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'x', ttlSeconds });
      assert.equal(res.status, 400, String(ttlSeconds));
      assert.equal(res.body.error.code, 'INVALID_TTL');
    }
    for (const ttlSeconds of [1, 3600]) {
      const res = await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'x', ttlSeconds });
      assert.equal(res.status, 201, String(ttlSeconds));
    }
    const unknown = await daemon.request('POST', '/api/client-tokens', { session: 'ghost', ephemeralId: 'x' });
    assert.equal(unknown.status, 404);
  });

  test('minting needs sessions:manage on the server key; a client token cannot mint or touch rules', async () => {
    const reader = (await daemon.request('POST', '/api/admin/keys', { name: 'r', scopes: ['sessions:read'] })).body.data.key;
    const denied = await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'x' }, reader);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'FORBIDDEN_SCOPE');
    const manager = (await daemon.request('POST', '/api/admin/keys', { name: 'm', scopes: ['sessions:manage'] })).body.data.key;
    assert.equal((await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'x' }, manager)).status, 201);
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS });
    const token = await mint();
    for (const [method, path, body] of [
      ['POST', '/api/client-tokens', { session: 'a', ephemeralId: 'x' }],
      ['GET', '/api/sessions/a/client-rules', undefined],
      ['PUT', '/api/sessions/a/client-rules', { recipientMode: 'any' }],
      ['DELETE', '/api/sessions/a/client-rules', undefined],
      ['GET', '/api/sessions', undefined],
      ['POST', '/api/sessions/a/stop', undefined],
      ['GET', '/api/admin/keys', undefined],
      ['GET', '/metrics', undefined],
    ] as const) {
      const res = await asClient(token, method, path, body);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error.code, 'ACTION_NOT_ALLOWED', `${method} ${path}`);
    }
  });
});

describe('client rules routes', () => {
  test('GET 404 when none; PUT creates and replaces; DELETE removes', async () => {
    const none = await daemon.request('GET', '/api/sessions/b/client-rules');
    assert.equal(none.status, 404);
    assert.equal(none.body.error.code, 'CLIENT_RULES_NOT_FOUND');
    const created = await rules('b', { recipientMode: 'conversation', allowedActions: 'send_message, read_contact', rateLimitPerMinute: 10, dailySendCap: 5, allowedOrigins: 'https://a.example, http://localhost:8080' });
    assert.deepEqual(
      { ...created, updatedAt: undefined },
      { session: 'b', recipientMode: 'conversation', enabled: true, allowedActions: 'send_message,read_contact', rateLimitPerMinute: 10, dailySendCap: 5, allowedOrigins: 'https://a.example,http://localhost:8080', updatedAt: undefined },
    );
    const replaced = await rules('b', { recipientMode: 'none' });
    assert.equal(replaced.allowedActions, '');
    assert.equal(replaced.dailySendCap, 0);
    assert.equal((await daemon.request('GET', '/api/sessions/b/client-rules')).body.data.recipientMode, 'none');
    assert.equal((await daemon.request('DELETE', '/api/sessions/b/client-rules')).status, 200);
    assert.equal((await daemon.request('GET', '/api/sessions/b/client-rules')).status, 404);
    assert.equal((await daemon.request('DELETE', '/api/sessions/b/client-rules')).status, 404);
  });

  test('400: invalid recipientMode (and verified, reserved), unknown action, bad origin, negative limits', async () => {
    for (const recipientMode of ['everyone', 'verified', '']) {
      const res = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode });
      assert.equal(res.status, 400, recipientMode);
      assert.equal(res.body.error.code, 'INVALID_RECIPIENT_MODE');
    }
    const action = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedActions: 'send_message,fly' });
    assert.equal(action.status, 400);
    assert.equal(action.body.error.details[0].path, '/allowedActions');
    const origin = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedOrigins: 'app.example.com' });
    assert.equal(origin.body.error.details[0].path, '/allowedOrigins');
    const negative = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', rateLimitPerMinute: -1 });
    assert.equal(negative.body.error.details[0].path, '/rateLimitPerMinute');
    const missing = await daemon.request('PUT', '/api/sessions/a/client-rules', { enabled: true });
    assert.equal(missing.body.error.details[0].path, '/recipientMode');
  });
});

describe('enforcement', () => {
  test('401: malformed, tampered, alg none, expired tokens; no rules for the session', async () => {
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS });
    const token = await mint();
    const [header, payload, signature] = token.slice(7).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = `svc_ct_${header}.${Buffer.from(JSON.stringify({ ...claims, eph: 'someone-else' })).toString('base64url')}.${signature}`;
    const none = `svc_ct_${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    const badSignature = `svc_ct_${header}.${payload}.${signature.slice(0, -4)}AAAA`;
    for (const [label, bad] of [['garbage', 'svc_ct_not-a-jwt'], ['tampered', tampered], ['alg none', none], ['bad signature', badSignature]]) {
      const res = await sendText(bad!);
      assert.equal(res.status, 401, label);
      assert.equal(res.body.error.code, 'TOKEN_INVALID', label);
    }
    const short = await mint('a', 'visitor-1', 1);
    await new Promise((r) => setTimeout(r, 2100));
    const expired = await sendText(short);
    assert.equal(expired.status, 401);
    assert.equal(expired.body.error.code, 'TOKEN_EXPIRED');
    await daemon.request('POST', '/api/sessions', { name: 'norules', start: true });
    const norulesToken = await mint('norules');
    const noRules = await asClient(norulesToken, 'POST', '/api/sessions/norules/messages/typing', { chatId: B, state: 'paused' });
    assert.equal(noRules.status, 401);
    assert.equal(noRules.body.error.code, 'NO_CLIENT_RULES');
  });

  test('each action of the §5 table is allowed when listed and denied when not', async () => {
    const seedId = (await daemon.request('POST', '/api/messages/send', { session: 'b', chatId: A, type: 'text', text: 'seed' })).body.data.messageId;
    const calls: Record<string, (t: string) => Promise<{ status: number; body: any }>> = {
      send_message: (t) => sendText(t),
      send_reaction: (t) => asClient(t, 'POST', '/api/sessions/a/messages/react', { chatId: B, messageId: seedId, reaction: '👍' }),
      send_typing: (t) => asClient(t, 'POST', '/api/sessions/a/messages/typing', { chatId: B, state: 'composing' }),
      send_seen: (t) => asClient(t, 'POST', '/api/sessions/a/messages/seen', { chatId: B, messageId: seedId }),
      read_presence: (t) => asClient(t, 'GET', '/api/sessions/a/presence'),
      subscribe_presence: (t) => asClient(t, 'POST', `/api/sessions/a/presence/${encodeURIComponent(B)}/subscribe`),
      read_contact: (t) => asClient(t, 'GET', '/api/sessions/a/contacts'),
    };
    for (const [action, call] of Object.entries(calls)) {
      await rules('a', { recipientMode: 'any', allowedActions: action });
      const token = await mint();
      const allowed = await call(token);
      assert.equal(allowed.status, 200, `${action} allowed: ${JSON.stringify(allowed.body)}`);
      const others = ALL_ACTIONS.split(',').filter((a) => a !== action).join(',');
      await rules('a', { recipientMode: 'any', allowedActions: others });
      const denied = await call(token);
      assert.equal(denied.status, 403, `${action} denied`);
      assert.equal(denied.body.error.code, 'ACTION_NOT_ALLOWED');
    }
    await rules('a', { recipientMode: 'any' });
    const token = await mint();
    const omitted = await sendText(token);
    assert.equal(omitted.body.error.code, 'ACTION_NOT_ALLOWED', 'allowedActions omitted denies all');
  });

  test('403: session mismatch in the path and in the body', async () => {
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS });
    await rules('b', { recipientMode: 'any', allowedActions: ALL_ACTIONS });
    const token = await mint('a');
    const body = await sendText(token, A, 'b');
    assert.equal(body.status, 403);
    assert.equal(body.body.error.code, 'SESSION_MISMATCH');
    const path = await asClient(token, 'POST', '/api/sessions/b/messages/typing', { chatId: A, state: 'paused' });
    assert.equal(path.status, 403);
    assert.equal(path.body.error.code, 'SESSION_MISMATCH');
  });

  test('recipientMode: none reads only; conversation only JIDs that wrote first; any', async () => {
    const token = await mint('a', 'rm');
    await rules('a', { recipientMode: 'none', allowedActions: ALL_ACTIONS });
    const none = await sendText(token);
    assert.equal(none.status, 403);
    assert.equal(none.body.error.code, 'RECIPIENT_NOT_ALLOWED');
    assert.equal((await asClient(token, 'GET', '/api/sessions/a/contacts')).status, 200, 'reads still work');

    await rules('a', { recipientMode: 'conversation', allowedActions: ALL_ACTIONS });
    const stranger = await sendText(token, '+15550200777');
    assert.equal(stranger.status, 403);
    assert.equal(stranger.body.error.code, 'RECIPIENT_NOT_ALLOWED');
    await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: '+15550200777', type: 'text', text: 'hello gateway' });
    await waitFor(async () => (await sendText(token, '+15550200777')).status === 200, 3000, 'reply allowed after the contact wrote');
    assert.equal((await sendText(token, '15550200777@s.whatsapp.net')).status, 200);

    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS });
    assert.equal((await sendText(token, '+15550200999')).status, 200);
  });

  test('origins: listed origin passes, another origin and a missing Origin are refused; empty list checks nothing', async () => {
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS, allowedOrigins: ORIGIN });
    const token = await mint();
    const ok = await sendText(token);
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), ORIGIN);
    const other = await sendText(token, B, 'a', 'https://evil.example');
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'ORIGIN_NOT_ALLOWED');
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    const missing = await sendText(token, B, 'a', null);
    assert.equal(missing.body.error.code, 'ORIGIN_NOT_ALLOWED');
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS });
    const anyOrigin = await sendText(token, B, 'a', 'https://anywhere.example');
    assert.equal(anyOrigin.status, 200);
    assert.equal(anyOrigin.headers.get('access-control-allow-origin'), 'https://anywhere.example');
  });

  test('CORS: preflight from the rules; non-client routes send no CORS headers', async () => {
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS, allowedOrigins: ORIGIN });
    const preflight = await fetch(`${daemon.url}/api/sessions/a/messages/typing`, { method: 'OPTIONS', headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), ORIGIN);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Content-Type/);
    const denied = await fetch(`${daemon.url}/api/sessions/a/messages/typing`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' } });
    assert.equal(denied.headers.get('access-control-allow-origin'), null);
    const management = await daemon.request('GET', '/api/sessions', undefined, undefined, { Origin: ORIGIN });
    assert.equal(management.headers.get('access-control-allow-origin'), null);
    const managementPreflight = await fetch(`${daemon.url}/api/sessions`, { method: 'OPTIONS', headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'GET' } });
    assert.equal(managementPreflight.headers.get('access-control-allow-origin'), null);
  });

  test('enabled false denies everything', async () => {
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS, enabled: false });
    const token = await mint();
    const res = await sendText(token);
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'CLIENT_ACCESS_DISABLED');
    assert.equal((await asClient(token, 'GET', '/api/sessions/a/contacts')).status, 403);
  });

  test('rules deleted mid-way: existing tokens are refused at once, even after new rules', async () => {
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS });
    const token = await mint();
    assert.equal((await sendText(token)).status, 200);
    await daemon.request('DELETE', '/api/sessions/a/client-rules');
    const after = await sendText(token);
    assert.equal(after.status, 401);
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS });
    const revived = await sendText(token);
    assert.equal(revived.status, 401);
    assert.equal(revived.body.error.code, 'TOKEN_INVALID');
    assert.equal((await sendText(await mint())).status, 200, 'a token minted after the new rules works');
  });

  test('sliding window: N pass, N+1 is 429 with Retry-After, other ephemeral ids pass, passes again once the window slides', async () => {
    await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS, rateLimitPerMinute: 3 });
    const limited = await mint('a', 'chatty');
    const quiet = await mint('a', 'quiet');
    const typing = (t: string) => asClient(t, 'POST', '/api/sessions/a/messages/typing', { chatId: B, state: 'paused' });
    const started = Date.now();
    for (let i = 0; i < 3; i += 1) assert.equal((await typing(limited)).status, 200, `request ${i + 1}`);
    const fourth = await typing(limited);
    assert.equal(fourth.status, 429);
    assert.equal(fourth.body.error.code, 'RATE_LIMITED');
    const retryAfter = Number(fourth.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter}`);
    assert.equal((await typing(quiet)).status, 200, 'another ephemeralId is not limited');
    await new Promise((r) => setTimeout(r, Math.max(0, started + 2000 - Date.now()) + 100));
    assert.equal((await typing(limited)).status, 200, 'passes once the window has slid');
  });

  test('daily cap counts messages and reactions, and survives a daemon restart', async () => {
    const own = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
    try {
      await pairedSession(own, 'a', A);
      await pairedSession(own, 'b', B);
      await own.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedActions: ALL_ACTIONS, dailySendCap: 2 });
      const token = (await own.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'capped' })).body.data.token;
      const call = (d: TestDaemon, method: string, path: string, body: unknown) => d.request(method, path, body, token, { Origin: ORIGIN });
      const first = await call(own, 'POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'one' });
      assert.equal(first.status, 200);
      assert.equal((await call(own, 'POST', '/api/sessions/a/messages/react', { chatId: B, messageId: first.body.data.messageId, reaction: '❤️' })).status, 200);
      assert.equal((await call(own, 'POST', '/api/sessions/a/messages/typing', { chatId: B, state: 'paused' })).status, 200, 'typing is not capped');
      const third = await call(own, 'POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'three' });
      assert.equal(third.status, 429);
      assert.equal(third.body.error.code, 'DAILY_CAP_REACHED');
      assert.ok(Number(third.headers.get('retry-after')) > 0);
      assert.equal(await own.stop(), 0);
      const again = await startDaemon({ dataDir: own.dataDir, env: { GATEWAY_LOG_LEVEL: 'warn' } });
      try {
        await waitFor(async () => (await again.request('GET', '/api/sessions/a')).body.data.status === 'CONNECTED', 5000, 'a restored');
        const afterRestart = await call(again, 'POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'four' });
        assert.equal(afterRestart.status, 429);
        assert.equal(afterRestart.body.error.code, 'DAILY_CAP_REACHED');
      } finally {
        await again.kill();
      }
    } finally {
      await own.cleanup();
    }
  });
});
