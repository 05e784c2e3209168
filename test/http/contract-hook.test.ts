// The response contract hook of the test helpers (test/helpers/contract.ts) refuses what drifts from the document.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkResponse, ContractDrift, matchTemplate } from '../helpers/contract.js';

const json = (extra: Record<string, string> = {}) => new Headers({ 'x-request-id': 'r1', 'content-type': 'application/json; charset=utf-8', ...extra });
const session = { name: 's', engine: 'sandbox', status: 'DISCONNECTED', statusReason: null, lastError: null, health: null, lastFrameAt: null, config: {}, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
const check = (method: string, path: string, status: number, body: unknown, headers = json()) => () => checkResponse(method, path, status, headers, body, JSON.stringify(body));

test('answers that fit the document pass', () => {
  check('GET', '/api/sessions/s', 200, { data: session })();
  check('GET', '/api/sessions?limit=5', 200, { data: [session] }, json({ 'x-total-count': '1' }))();
  check('GET', '/api/sessions/nobody', 404, { error: { code: 'SESSION_NOT_FOUND', message: 'session nobody not found' } })();
  check('GET', '/api/no-such-route', 404, { error: { code: 'ROUTE_NOT_FOUND', message: 'no route' } })();
  check('PUT', '/api/sessions/s', 405, { error: { code: 'METHOD_NOT_ALLOWED', message: 'no' } })();
});

test('drift fails: an undocumented field, a missing field, a wrong type, a code of another status', () => {
  assert.throws(check('GET', '/api/sessions/s', 200, { data: { ...session, secret: 1 } }), ContractDrift);
  const { createdAt: _, ...withoutCreatedAt } = session;
  assert.throws(check('GET', '/api/sessions/s', 200, { data: withoutCreatedAt }), ContractDrift);
  assert.throws(check('GET', '/api/sessions/s', 200, { data: { ...session, statusReason: 'NAPPING' } }), ContractDrift);
  assert.throws(check('GET', '/api/sessions/s', 200, session), ContractDrift, 'not wrapped in data');
  assert.throws(check('GET', '/api/sessions/nobody', 404, { error: { code: 'RATE_LIMITED', message: 'x' } }), ContractDrift);
  assert.throws(check('GET', '/api/sessions/nobody', 404, { error: { code: 'SESSION_NOT_FOUND' } }), ContractDrift);
});

test('drift fails: an undocumented status, a list without X-Total-Count, a 429 without Retry-After, no X-Request-Id', () => {
  assert.throws(check('GET', '/api/sessions/s', 201, { data: session }), /status 201 is not documented/);
  assert.throws(check('GET', '/api/sessions', 200, { data: [session] }), /X-Total-Count/);
  assert.throws(check('GET', '/api/sessions', 429, { error: { code: 'RATE_LIMITED', message: 'slow down' } }), /Retry-After/);
  assert.throws(check('GET', '/api/sessions/s', 200, { data: session }, new Headers({ 'content-type': 'application/json' })), /X-Request-Id/);
  assert.throws(check('GET', '/api/no-such-route', 200, { data: {} }), ContractDrift);
});

test('a concrete path finds its template, literal segments first', () => {
  assert.equal(matchTemplate('/api/sessions/shop/groups/join')?.path, '/api/sessions/{session}/groups/join');
  assert.equal(matchTemplate('/api/sessions/shop/groups/123%40g.us')?.path, '/api/sessions/{session}/groups/{groupId}');
  assert.equal(matchTemplate('/api/sessions/shop/')?.path, '/api/sessions/{session}');
});
