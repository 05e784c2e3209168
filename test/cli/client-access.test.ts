// `gateway client-rules show|set|delete SESSION` with each flag, and `gateway client-tokens mint SESSION EPHEMERAL_ID --ttl`,
// against a real daemon: what the CLI sets is what the daemon stores and enforces.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliFor } from '../helpers/cli.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import type { ClientRulesView } from '../../src/auth/client-rules.js';

const SHOP = '+15550300001';
const PEER = '+15550300002';
const ORIGIN = 'https://shop.example.test';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'shop', SHOP);
  await pairedSession(daemon, 'peer', PEER);
});
after(() => daemon.cleanup());

const gateway = cliFor(() => daemon);

const storedRules = async (session: string) => daemon.request('GET', `/api/sessions/${session}/client-rules`);

describe('gateway client-rules', () => {
  test('show before any rules fails with CLIENT_RULES_NOT_FOUND', async () => {
    const res = await gateway('client-rules', 'show', 'shop');
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /CLIENT_RULES_NOT_FOUND/);
  });

  test('set with every flag stores each field; show prints them (human and --json)', async () => {
    const set = await gateway(
      '--json', 'client-rules', 'set', 'shop',
      '--recipient-mode', 'conversation',
      '--actions', 'send_message,send_typing',
      '--rate-per-minute', '7',
      '--daily-cap', '3',
      '--origins', `${ORIGIN},http://localhost:8080`,
    );
    assert.equal(set.code, 0, set.stderr);
    const printed = JSON.parse(set.stdout) as ClientRulesView;
    const expected = {
      session: 'shop',
      recipientMode: 'conversation',
      enabled: true,
      allowedActions: 'send_message,send_typing',
      rateLimitPerMinute: 7,
      dailySendCap: 3,
      allowedOrigins: `${ORIGIN},http://localhost:8080`,
    };
    assert.deepEqual({ ...printed, updatedAt: undefined }, { ...expected, updatedAt: undefined });
    const stored = await storedRules('shop');
    assert.equal(stored.status, 200);
    assert.deepEqual({ ...stored.body.data, updatedAt: undefined }, { ...expected, updatedAt: undefined });

    const human = await gateway('client-rules', 'show', 'shop');
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /recipientMode\s+conversation/);
    assert.match(human.stdout, /allowedActions\s+send_message,send_typing/);
    assert.match(human.stdout, /rateLimitPerMinute\s+7/);
    assert.match(human.stdout, /dailySendCap\s+3/);
    assert.match(human.stdout, /enabled\s+true/);
    const json = await gateway('--json', 'client-rules', 'show', 'shop');
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual({ ...(JSON.parse(json.stdout) as ClientRulesView), updatedAt: undefined }, { ...expected, updatedAt: undefined });
  });

  test('set replaces: omitted flags fall back to their defaults; --disabled turns client access off', async () => {
    const set = await gateway('--json', 'client-rules', 'set', 'shop', '--recipient-mode', 'none', '--disabled');
    assert.equal(set.code, 0, set.stderr);
    const stored = (await storedRules('shop')).body.data as ClientRulesView;
    assert.equal(stored.recipientMode, 'none');
    assert.equal(stored.enabled, false);
    assert.equal(stored.allowedActions, '');
    assert.equal(stored.rateLimitPerMinute, 0);
    assert.equal(stored.dailySendCap, 0);
    assert.equal(stored.allowedOrigins, '');
  });

  test('set refuses what the daemon refuses: missing --recipient-mode, verified, unknown action', async () => {
    const missing = await gateway('client-rules', 'set', 'shop');
    assert.equal(missing.code, 2, 'usage error');
    assert.match(missing.stderr, /recipient-mode/);
    const verified = await gateway('client-rules', 'set', 'shop', '--recipient-mode', 'verified');
    assert.notEqual(verified.code, 0);
    assert.match(verified.stderr, /INVALID_RECIPIENT_MODE/);
    const unknown = await gateway('client-rules', 'set', 'shop', '--recipient-mode', 'any', '--actions', 'send_message,fly');
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /VALIDATION_FAILED.*fly/);
    assert.equal(((await storedRules('shop')).body.data as ClientRulesView).recipientMode, 'none', 'refused sets change nothing');
  });

  test('delete removes the rules and revokes the tokens; a second delete fails', async () => {
    await gateway('client-rules', 'set', 'shop', '--recipient-mode', 'any', '--actions', 'send_typing');
    const token = (await daemon.request('POST', '/api/client-tokens', { session: 'shop', ephemeralId: 'before-delete' })).body.data.token as string;
    const typing = () => daemon.request('POST', '/api/sessions/shop/messages/typing', { chatId: PEER, state: 'paused' }, token);
    assert.equal((await typing()).status, 200);
    const removed = await gateway('client-rules', 'delete', 'shop');
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /removed/);
    assert.equal((await storedRules('shop')).status, 404);
    assert.equal((await typing()).status, 401);
    const again = await gateway('client-rules', 'delete', 'shop');
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /CLIENT_RULES_NOT_FOUND/);
  });
});

describe('gateway client-tokens mint', () => {
  test('--ttl sets the lifetime; the token works on an allowed route and not on another', async () => {
    assert.equal((await gateway('client-rules', 'set', 'shop', '--recipient-mode', 'any', '--actions', 'send_typing,read_contact', '--origins', ORIGIN)).code, 0);
    const minted = await gateway('--json', 'client-tokens', 'mint', 'shop', 'visitor-42', '--ttl', '120');
    assert.equal(minted.code, 0, minted.stderr);
    const data = JSON.parse(minted.stdout) as { token: string; expiresAt: string; session: string; ephemeralId: string };
    assert.match(data.token, /^svc_ct_/);
    assert.equal(data.session, 'shop');
    assert.equal(data.ephemeralId, 'visitor-42');
    const ttl = (Date.parse(data.expiresAt) - Date.now()) / 1000;
    assert.ok(ttl > 110 && ttl <= 120, `lifetime ${ttl}`);

    const allowed = await daemon.request('POST', '/api/sessions/shop/messages/typing', { chatId: PEER, state: 'composing' }, data.token, { Origin: ORIGIN });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    const contacts = await daemon.request('GET', '/api/sessions/shop/contacts', undefined, data.token, { Origin: ORIGIN });
    assert.equal(contacts.status, 200, JSON.stringify(contacts.body));
    const notAllowed = await daemon.request('POST', '/api/messages/send', { session: 'shop', chatId: PEER, type: 'text', text: 'no' }, data.token, { Origin: ORIGIN });
    assert.equal(notAllowed.status, 403);
    assert.equal(notAllowed.body.error.code, 'ACTION_NOT_ALLOWED');
  });

  test('human output prints the token; without --ttl the lifetime is 900 s; an out-of-range --ttl fails', async () => {
    const human = await gateway('client-tokens', 'mint', 'shop', 'visitor-43');
    assert.equal(human.code, 0, human.stderr);
    const token = human.stdout.match(/svc_ct_[\w-]+\.[\w-]+\.[\w-]+/)?.[0];
    assert.ok(token, human.stdout);
    const expiresAt = human.stdout.match(/expiresAt\s+(\S+)/)?.[1];
    const ttl = (Date.parse(expiresAt ?? '') - Date.now()) / 1000;
    assert.ok(ttl > 890 && ttl <= 900, `default lifetime ${ttl}`);
    assert.equal((await daemon.request('GET', '/api/sessions/shop/contacts', undefined, token, { Origin: ORIGIN })).status, 200);
    const tooLong = await gateway('client-tokens', 'mint', 'shop', 'visitor-44', '--ttl', '901');
    assert.notEqual(tooLong.code, 0);
    assert.match(tooLong.stderr, /INVALID_TTL/);
    const unknown = await gateway('client-tokens', 'mint', 'ghost', 'visitor-45');
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /SESSION_NOT_FOUND/);
  });
});
