// Calls through the HTTP API (sandbox engine): the reject route's access and answers, PATCH of a session's config, and
// the config.calls policy (a call rejected with no request, the reply text sent only after a reject).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';

const A = '+15552000001';
const B = '+15552000002';
const CALLER = '+15552000009';
const CALLER_JID = '15552000009@s.whatsapp.net';

let daemon: TestDaemon;
let events: EventCollector;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', A);
  await pairedSession(daemon, 'b', B);
});
after(async () => {
  events.close();
  await daemon.cleanup();
});

const ring = async (session = 'a'): Promise<string> => {
  const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/call`, { from: CALLER, outcome: 'received' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const callId = res.body.data.callId as string;
  await events.next((e) => e.session === session && e.event === 'call.received' && e.payload.callId === callId, 5000, 'call.received');
  return callId;
};
const reject = (callId: string, session = 'a', key?: string) => daemon.request('POST', `/api/sessions/${session}/calls/${encodeURIComponent(callId)}/reject`, {}, key);
const key = async (scopes: string[], sessions?: string[]) =>
  (await daemon.request('POST', '/api/admin/keys', { name: `k${Date.now()}`, scopes, ...(sessions ? { sessions } : {}) })).body.data.key as string;

describe('POST /api/sessions/{session}/calls/{callId}/reject', () => {
  test("a key limited to another session cannot reject this session's call; the scope is chats:manage", async () => {
    const callId = await ring();
    const onlyB = await key(['chats:manage'], ['b']);
    const refused = await reject(callId, 'a', onlyB);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'FORBIDDEN_SESSION');
    // through its own session's path it reaches only its own session's calls
    const viaB = await reject(callId, 'b', onlyB);
    assert.equal(viaB.status, 404);
    assert.equal(viaB.body.error.code, 'CALL_NOT_FOUND');
    const readOnly = await key(['sessions:read', 'messages:send'], ['a']);
    assert.equal((await reject(callId, 'a', readOnly)).body.error.code, 'FORBIDDEN_SCOPE');
    // still ringing after all that: the right key rejects it
    const onlyA = await key(['chats:manage'], ['a']);
    const ok = await reject(callId, 'a', onlyA);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const rejected = await events.next((e) => e.session === 'a' && e.event === 'call.rejected' && e.payload.callId === callId);
    assert.equal(rejected.payload.endedBy, 'gateway');
    assert.equal((await daemon.request('GET', `/api/sandbox/sessions/a/calls/${callId}`)).body.data.callerSaw, 'rejected');
  });

  test('bounded call ids; unknown and ended calls; a session that is not connected', async () => {
    for (const bad of ['a b', 'x'.repeat(129), 'id/../x', 'id%00']) {
      const res = await reject(bad);
      assert.ok([400, 404].includes(res.status), `${bad}: ${res.status}`);
      if (res.status === 404) assert.notEqual(res.body.error.code, 'CALL_NOT_FOUND', `${bad} reached the engine`);
    }
    assert.equal((await reject('x'.repeat(129))).body.error.code, 'VALIDATION_FAILED');
    assert.equal((await reject('UNKNOWN-CALL')).body.error.code, 'CALL_NOT_FOUND');
    const callId = await ring();
    await daemon.request('POST', '/api/sandbox/sessions/a/call', { from: CALLER, outcome: 'cancelled', callId });
    const missed = await events.next((e) => e.session === 'a' && e.event === 'call.missed' && e.payload.callId === callId);
    assert.equal(missed.payload.endedBy, 'caller');
    const ended = await reject(callId);
    assert.equal(ended.status, 409);
    assert.equal(ended.body.error.code, 'CALL_ENDED');
    assert.equal((await reject('ANY', 'nobody')).body.error.code, 'SESSION_NOT_FOUND');
    await daemon.request('POST', '/api/sessions', { name: 'down', engine: 'sandbox' });
    assert.equal((await reject('ANY', 'down')).body.error.code, 'SESSION_NOT_CONNECTED');
  });
});

describe('PATCH /api/sessions/{session} and config.calls', () => {
  test('bounded, checked settings; each key given replaces, null removes, the rest stay', async () => {
    const created = await daemon.request('POST', '/api/sessions', { name: 'c', engine: 'sandbox', config: { safeMode: true, calls: { reject: false } } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.data.config, { safeMode: true, calls: { reject: false } });
    const patch = (config: unknown, session = 'c', k?: string) => daemon.request('PATCH', `/api/sessions/${session}`, { config }, k);
    const changed = await patch({ calls: { reject: true, replyText: 'line one\nline two\tend' } });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.deepEqual(changed.body.data.config, { safeMode: true, calls: { reject: true, replyText: 'line one\nline two\tend' } });
    assert.deepEqual((await patch({ safeMode: null })).body.data.config, { calls: { reject: true, replyText: 'line one\nline two\tend' } });
    assert.deepEqual((await daemon.request('GET', '/api/sessions/c')).body.data.config, { calls: { reject: true, replyText: 'line one\nline two\tend' } });
    for (const bad of [
      {},
      { engine: 'baileys' },
      { unknown: true },
      { calls: {} },
      { calls: { reject: 'yes' } },
      { calls: { reject: true, replyText: '' } },
      { calls: { reject: true, replyText: '   \n ' } },
      { calls: { reject: true, replyText: 'bell \u0007' } },
      { calls: { reject: true, replyText: 'nul \u0000' } },
      { calls: { reject: true, replyText: 'x'.repeat(4097) } },
      { calls: { reject: true, other: 1 } },
    ]) {
      const res = await patch(bad);
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.status}`);
      assert.equal(res.body.error.code, 'VALIDATION_FAILED');
    }
    assert.equal((await patch({ calls: { reject: true, replyText: 'x'.repeat(4096) } })).status, 200);
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'd', config: { calls: { reject: true, replyText: 'x'.repeat(4097) } } })).status, 400);
    assert.equal((await daemon.request('PATCH', '/api/sessions/c', {})).status, 400);
    assert.equal((await patch({ safeMode: true }, 'nobody')).body.error.code, 'SESSION_NOT_FOUND');
    const onlyA = await key(['sessions:manage'], ['a']);
    assert.equal((await patch({ safeMode: true }, 'c', onlyA)).body.error.code, 'FORBIDDEN_SESSION');
    // a reply is a message the session sends to every caller: setting one takes messages:send as well
    const manager = await key(['sessions:manage']);
    assert.equal((await patch({ calls: { reject: true } }, 'c', manager)).status, 200);
    assert.equal((await patch({ calls: { reject: true, replyText: 'call me never' } }, 'c', manager)).body.error?.code, 'FORBIDDEN_SCOPE');
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'e', config: { calls: { reject: true, replyText: 'hi' } } }, manager)).body.error?.code, 'FORBIDDEN_SCOPE');
    const sender = await key(['sessions:manage', 'messages:send']);
    assert.equal((await patch({ calls: { reject: true, replyText: 'write instead' } }, 'c', sender)).status, 200);
    const reader = await key(['sessions:read']);
    assert.equal((await patch({ safeMode: true }, 'c', reader)).body.error.code, 'FORBIDDEN_SCOPE');
    const audit = await daemon.request('GET', '/api/admin/audit?action=session.update');
    assert.ok(audit.body.data.some((e: { target: string; details?: { fields?: string[] } }) => e.target === 'c' && e.details?.fields?.includes('calls')));
  });

  test('reject: true rejects each call at once; with no replyText nothing is sent; the policy changes without a restart', async () => {
    assert.equal((await daemon.request('PATCH', '/api/sessions/b', { config: { calls: { reject: true } } })).status, 200);
    const res = await daemon.request('POST', '/api/sandbox/sessions/b/call', { from: CALLER, outcome: 'received', isVideo: true });
    const callId = res.body.data.callId;
    const rejected = await events.next((e) => e.session === 'b' && e.event === 'call.rejected' && e.payload.callId === callId, 5000, 'auto reject');
    assert.equal(rejected.payload.endedBy, 'auto');
    assert.equal(rejected.payload.isVideo, true);
    await waitFor(async () => (await daemon.request('GET', `/api/sandbox/sessions/b/calls/${callId}`)).body.data.callerSaw === 'rejected', 5000, 'the caller saw it');
    const replyText = `we do not take calls ${Date.now()}`;
    await daemon.request('PATCH', '/api/sessions/b', { config: { calls: { reject: true, replyText } } });
    const second = (await daemon.request('POST', '/api/sandbox/sessions/b/call', { from: CALLER, outcome: 'received' })).body.data.callId;
    await events.next((e) => e.session === 'b' && e.event === 'call.rejected' && e.payload.callId === second, 5000, 'second auto reject');
    const sent = await events.next((e) => e.session === 'b' && e.event === 'message.sent' && e.payload.text === replyText, 5000, 'the reply');
    assert.equal(sent.payload.chatId, CALLER_JID);
    // one reply per rejected call: the first (no replyText then) got none
    const messages = (await daemon.request('GET', '/api/sessions/b/messages')).body.data as Array<{ chatId: string; fromMe: boolean }>;
    assert.equal(messages.filter((m) => m.chatId === CALLER_JID && m.fromMe).length, 1);
    // a call that ended before the policy could act gets no reply (nothing to reject)
    await daemon.request('PATCH', '/api/sessions/b', { config: { calls: { reject: false, replyText: 'never sent' } } });
    const third = (await daemon.request('POST', '/api/sandbox/sessions/b/call', { from: CALLER, outcome: 'received' })).body.data.callId;
    await events.next((e) => e.session === 'b' && e.event === 'call.received' && e.payload.callId === third);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(events.events.some((e) => e.session === 'b' && e.event === 'call.rejected' && e.payload.callId === third), false, 'reject: false lets calls ring');
    assert.equal((await reject(third, 'b')).status, 200);
    assert.equal(events.events.some((e) => e.event === 'message.sent' && e.payload.text === 'never sent'), false);
  });
});
