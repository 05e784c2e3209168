import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CLIENT_ROUTES } from '../../src/auth/client-actions.js';
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

  test('every route of the action table: allowed with its action, 403 ACTION_NOT_ALLOWED without it', async () => {
    const seedId = (await daemon.request('POST', '/api/messages/send', { session: 'b', chatId: A, type: 'text', text: 'seed for the route loop' })).body.data.messageId;
    const chat = encodeURIComponent(B);
    const samples: Record<string, (t: string) => Promise<{ status: number; body: any }>> = {
      'POST /api/messages/send': (t) => sendText(t),
      'POST /api/sessions/:session/messages/send': (t) => asClient(t, 'POST', '/api/sessions/a/messages/send', { chatId: B, type: 'text', text: 'by the path form' }),
      'POST /api/sessions/:session/messages/react': (t) => asClient(t, 'POST', '/api/sessions/a/messages/react', { chatId: B, messageId: seedId, reaction: '👍' }),
      'POST /api/sessions/:session/messages/typing': (t) => asClient(t, 'POST', '/api/sessions/a/messages/typing', { chatId: B, state: 'composing' }),
      'POST /api/sessions/:session/messages/seen': (t) => asClient(t, 'POST', '/api/sessions/a/messages/seen', { chatId: B, messageId: seedId }),
      'GET /api/sessions/:session/presence': (t) => asClient(t, 'GET', '/api/sessions/a/presence'),
      'GET /api/sessions/:session/presence/:chatId': (t) => asClient(t, 'GET', `/api/sessions/a/presence/${chat}`),
      'POST /api/sessions/:session/presence/:chatId/subscribe': (t) => asClient(t, 'POST', `/api/sessions/a/presence/${chat}/subscribe`),
      'GET /api/sessions/:session/contacts': (t) => asClient(t, 'GET', '/api/sessions/a/contacts'),
      'GET /api/sessions/:session/contacts/:contactId': (t) => asClient(t, 'GET', `/api/sessions/a/contacts/${chat}`),
      'GET /api/sessions/:session/contacts/:contactId/picture': (t) => asClient(t, 'GET', `/api/sessions/a/contacts/${chat}/picture`),
      'POST /api/sessions/:session/contacts/check': (t) => asClient(t, 'POST', '/api/sessions/a/contacts/check', { phoneNumbers: [B] }),
    };
    const tableKeys = CLIENT_ROUTES.map((r) => `${r.method} ${r.path}`);
    assert.deepEqual([...tableKeys].sort(), Object.keys(samples).sort(), 'one sample request per route of the table');
    const token = await mint('a', 'route-loop');
    for (const route of CLIENT_ROUTES) {
      const label = `${route.method} ${route.path} (${route.action})`;
      const call = samples[`${route.method} ${route.path}`]!;
      await rules('a', { recipientMode: 'any', allowedActions: route.action });
      const allowed = await call(token);
      // allowed: whatever the route answers (a contact without a picture is a 404), but no validation, auth or rule refusal
      assert.ok(![400, 401, 403, 429].includes(allowed.status), `${label} allowed: ${allowed.status} ${JSON.stringify(allowed.body)}`);
      await rules('a', { recipientMode: 'any', allowedActions: ALL_ACTIONS.split(',').filter((a) => a !== route.action).join(',') });
      const denied = await call(token);
      assert.equal(denied.status, 403, `${label} denied: ${JSON.stringify(denied.body)}`);
      assert.equal(denied.body.error.code, 'ACTION_NOT_ALLOWED', label);
    }
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

  test('recipientMode none and conversation apply to react, typing and seen too', async () => {
    const token = await mint('a', 'rm-all');
    const stranger = '+15550200778';
    const seedId = (await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: stranger, type: 'text', text: 'outbound only' })).body.data.messageId;
    assert.ok(seedId);
    const calls = {
      react: (chatId: string, messageId: string) => asClient(token, 'POST', '/api/sessions/a/messages/react', { chatId, messageId, reaction: '👍' }),
      typing: (chatId: string) => asClient(token, 'POST', '/api/sessions/a/messages/typing', { chatId, state: 'composing' }),
      seen: (chatId: string, messageId: string) => asClient(token, 'POST', '/api/sessions/a/messages/seen', { chatId, messageId }),
    };
    await rules('a', { recipientMode: 'none', allowedActions: ALL_ACTIONS });
    for (const [name, call] of Object.entries(calls)) {
      const res = await call(B, seedId);
      assert.equal(res.status, 403, `none: ${name}`);
      assert.equal(res.body.error.code, 'RECIPIENT_NOT_ALLOWED', `none: ${name}`);
    }
    await rules('a', { recipientMode: 'conversation', allowedActions: ALL_ACTIONS });
    // the session wrote to this JID, but the JID never wrote to the session
    for (const [name, call] of Object.entries(calls)) {
      const res = await call(stranger, seedId);
      assert.equal(res.status, 403, `conversation, stranger: ${name}`);
      assert.equal(res.body.error.code, 'RECIPIENT_NOT_ALLOWED', `conversation, stranger: ${name}`);
    }
    const inbound = await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: stranger, type: 'text', text: 'now I wrote' });
    assert.equal(inbound.status, 200, JSON.stringify(inbound.body));
    const theirs = inbound.body.data.messageId as string;
    await waitFor(async () => (await calls.typing(stranger)).status === 200, 3000, 'typing allowed after the contact wrote');
    assert.equal((await calls.react(stranger, theirs)).status, 200, 'react allowed after the contact wrote');
    assert.equal((await calls.seen(stranger, theirs)).status, 200, 'seen allowed after the contact wrote');
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
    // the daemon records the first hit after this instant, so it stays in the 2 s window until at least started + 2000
    const started = Date.now();
    let firstAnswered = 0;
    for (let i = 0; i < 3; i += 1) {
      assert.equal((await typing(limited)).status, 200, `request ${i + 1}`);
      // the first hit was recorded before its answer: it has left the window 2 s after that answer at the latest
      if (i === 0) firstAnswered = Date.now();
    }
    const fourth = await typing(limited);
    assert.equal(fourth.status, 429);
    assert.equal(fourth.body.error.code, 'RATE_LIMITED');
    const retryAfter = Number(fourth.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter}`);
    assert.equal((await typing(quiet)).status, 200, 'another ephemeralId is not limited');
    // past the 1-second mark a fixed 1 s bucket would have reset; 500 ms before the oldest hit can leave, still limited
    await new Promise((r) => setTimeout(r, Math.max(0, started + 1500 - Date.now())));
    // (on a machine so loaded that the requests above took most of the window, this probe would land after it)
    if (Date.now() < started + 1700) {
      const late = await typing(limited);
      assert.equal(late.status, 429, 'still limited shortly before the oldest request leaves the window');
      assert.equal(late.body.error.code, 'RATE_LIMITED');
      assert.ok(Number(late.headers.get('retry-after')) >= 1, `Retry-After ${late.headers.get('retry-after')}`);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, firstAnswered + 2000 - Date.now()) + 100));
    assert.equal((await typing(limited)).status, 200, 'passes once the window has slid');
  });

  test('daily cap under parallel sends: cap 2, five at once → exactly 2 pass and 3 get 429 DAILY_CAP_REACHED', async () => {
    // safe mode pauses each send (0.4 s and more), so all five requests are inside the gateway before the first send
    // finishes: a cap checked before the handler but counted only after it would let all five through. (A slow loopback
    // media URL did this before; client tokens may no longer make the daemon fetch loopback URLs.)
    const created = await daemon.request('POST', '/api/sessions', { name: 'par', start: true, engine: 'sandbox', config: { safeMode: true } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await daemon.request('POST', '/api/sandbox/sessions/par/pair', { phoneNumber: '+15550200021' })).status, 200);
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/par')).body.data.status === 'CONNECTED', 5000, 'par CONNECTED');
    await rules('par', { recipientMode: 'any', allowedActions: ALL_ACTIONS, dailySendCap: 2 });
    const token = await mint('par', 'burst');
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => asClient(token, 'POST', '/api/messages/send', { session: 'par', chatId: B, type: 'text', text: `parallel ${i}` })),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 200, 429, 429, 429], JSON.stringify(results.map((r) => r.body)));
    for (const refused of results.filter((r) => r.status === 429)) {
      assert.equal(refused.body.error.code, 'DAILY_CAP_REACHED');
      assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
    }
    // reactions draw from the same count
    const messageId = results.find((r) => r.status === 200)!.body.data.messageId;
    const reaction = await asClient(token, 'POST', '/api/sessions/par/messages/react', { chatId: B, messageId, reaction: '👍' });
    assert.equal(reaction.status, 429);
    assert.equal(reaction.body.error.code, 'DAILY_CAP_REACHED');
  });

  test('daily cap: a send that fails gives its slot back (only successful sends count)', async () => {
    await pairedSession(daemon, 'flaky', '+15550200022');
    await rules('flaky', { recipientMode: 'any', allowedActions: ALL_ACTIONS, dailySendCap: 1 });
    const token = await mint('flaky', 'retrying');
    const send = () => asClient(token, 'POST', '/api/messages/send', { session: 'flaky', chatId: B, type: 'text', text: 'maybe' });
    assert.equal((await daemon.request('POST', '/api/sessions/flaky/stop')).status, 200);
    for (let i = 0; i < 3; i += 1) {
      const failed = await send();
      assert.equal(failed.status, 409, `failed send ${i + 1}: ${JSON.stringify(failed.body)}`);
      assert.equal(failed.body.error.code, 'SESSION_NOT_CONNECTED');
    }
    assert.equal((await daemon.request('POST', '/api/sessions/flaky/start')).status, 200);
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/flaky')).body.data.status === 'CONNECTED', 5000, 'flaky CONNECTED');
    assert.equal((await send()).status, 200, 'the failed sends did not use up the cap of 1');
    const capped = await send();
    assert.equal(capped.status, 429);
    assert.equal(capped.body.error.code, 'DAILY_CAP_REACHED');
  });

  test('daily cap: a send refused for its Idempotency-Key gives its slot back; the replay of a sent one takes none', async () => {
    await pairedSession(daemon, 'keyed', '+15550200024');
    await rules('keyed', { recipientMode: 'any', allowedActions: ALL_ACTIONS, dailySendCap: 2 });
    const token = await mint('keyed', 'retrying');
    const send = (key: string, text = 'once') =>
      daemon.request('POST', '/api/messages/send', { session: 'keyed', chatId: B, type: 'text', text }, token, { Origin: ORIGIN, 'Idempotency-Key': key });
    for (let i = 0; i < 3; i += 1) assert.equal((await send('has space')).status, 400, 'a malformed key');
    const first = await send('order-1');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const replay = await send('order-1');
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    const reused = await send('order-1', 'another text');
    assert.equal(reused.body.error?.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal((await send('order-2')).status, 200, 'the refusals and the replay left the second slot');
    const capped = await send('order-3');
    assert.equal(capped.status, 429);
    assert.equal(capped.body.error.code, 'DAILY_CAP_REACHED');
    const lateReplay = await send('order-2');
    assert.equal(lateReplay.status, 200, `the replay of a sent one past the cap: ${JSON.stringify(lateReplay.body)}`);
    assert.equal(lateReplay.headers.get('idempotent-replayed'), 'true');
    assert.equal((await send('order-3')).body.error?.code, 'DAILY_CAP_REACHED', 'the capped key was given up: still capped, not in flight');
  });

  test('a session deleted and created again under the same name does not revive its old tokens', async () => {
    await pairedSession(daemon, 'reborn', '+15550200023');
    const ruleBody = { recipientMode: 'any', allowedActions: ALL_ACTIONS };
    await rules('reborn', ruleBody);
    const old = await mint('reborn', 'visitor');
    const typing = (t: string) => asClient(t, 'POST', '/api/sessions/reborn/messages/typing', { chatId: B, state: 'paused' });
    assert.equal((await typing(old)).status, 200, 'the token works before the delete');
    assert.equal((await daemon.request('DELETE', '/api/sessions/reborn')).status, 200);
    assert.equal((await typing(old)).status, 401, 'refused while the session is gone');
    await pairedSession(daemon, 'reborn', '+15550200023');
    await rules('reborn', ruleBody);
    const revived = await typing(old);
    assert.equal(revived.status, 401, JSON.stringify(revived.body));
    assert.equal(revived.body.error.code, 'TOKEN_INVALID');
    assert.equal((await typing(await mint('reborn', 'visitor'))).status, 200, 'a token minted for the new session works');
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

describe('CLIENT_TOKEN_MAX_TTL', () => {
  async function ttlDaemon(env: Record<string, string>) {
    const d = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', ...env } });
    const created = await d.request('POST', '/api/sessions', { name: 'ttl' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return d;
  }
  const mintOn = (d: TestDaemon, ttlSeconds?: number) => d.request('POST', '/api/client-tokens', { session: 'ttl', ephemeralId: 'e', ...(ttlSeconds === undefined ? {} : { ttlSeconds }) });
  const lifetime = (res: { body: any }) => Math.round((Date.parse(res.body.data.expiresAt) - Date.now()) / 1000);

  test('default maximum 900: 900 passes, 901 is 400 INVALID_TTL; the default lifetime is 900', async () => {
    const d = await ttlDaemon({});
    try {
      assert.equal((await mintOn(d, 900)).status, 201);
      const over = await mintOn(d, 901);
      assert.equal(over.status, 400);
      assert.equal(over.body.error.code, 'INVALID_TTL');
      const dflt = await mintOn(d);
      assert.equal(dflt.status, 201);
      assert.ok(Math.abs(lifetime(dflt) - 900) <= 2, `default lifetime ${lifetime(dflt)}`);
    } finally {
      await d.cleanup();
    }
  });

  test('CLIENT_TOKEN_MAX_TTL=1200: 1200 passes, 1201 is 400 INVALID_TTL; the default stays 900', async () => {
    const d = await ttlDaemon({ CLIENT_TOKEN_MAX_TTL: '1200' });
    try {
      const max = await mintOn(d, 1200);
      assert.equal(max.status, 201, JSON.stringify(max.body));
      assert.ok(Math.abs(lifetime(max) - 1200) <= 2, `lifetime ${lifetime(max)}`);
      const over = await mintOn(d, 1201);
      assert.equal(over.status, 400);
      assert.equal(over.body.error.code, 'INVALID_TTL');
      assert.equal(over.body.error.details[0].path, '/ttlSeconds');
      assert.ok(Math.abs(lifetime(await mintOn(d)) - 900) <= 2, 'default lifetime 900');
    } finally {
      await d.cleanup();
    }
  });

  test('CLIENT_TOKEN_MAX_TTL=600: the default lifetime is min(900, max) = 600', async () => {
    const d = await ttlDaemon({ CLIENT_TOKEN_MAX_TTL: '600' });
    try {
      const dflt = await mintOn(d);
      assert.equal(dflt.status, 201, JSON.stringify(dflt.body));
      assert.ok(Math.abs(lifetime(dflt) - 600) <= 2, `default lifetime ${lifetime(dflt)}`);
      assert.equal((await mintOn(d, 601)).body.error.code, 'INVALID_TTL');
    } finally {
      await d.cleanup();
    }
  });
});
