// ApiKeys on a real (in-memory) store: the subset rule, ownership, the per-key cap on created keys, the rate limit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKeys, MAX_KEYS_PER_KEY } from '../../src/auth/api-keys.js';
import { sha256 } from '../../src/auth/secrets.js';
import type { Principal } from '../../src/auth/scopes.js';
import { GatewayError, RateLimitedError } from '../../src/errors.js';
import { openDatabase } from '../../src/store/db.js';
import { createKeysRepo } from '../../src/store/keys.js';

type KeyPrincipal = Extract<Principal, { kind: 'key' }>;

function setup() {
  const keys = new ApiKeys(createKeysRepo(openDatabase(':memory:')));
  const principalOf = (key: string) => keys.authenticate(sha256(key)) as KeyPrincipal;
  return { keys, principalOf };
}

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err.code;
  }
  return 'none';
};

describe('ApiKeys', () => {
  it('a "*" key grants any scope, "*" included, within its sessions; a narrower key only what it holds', () => {
    const { keys, principalOf } = setup();
    const star = principalOf(keys.create({ name: 'star', scopes: ['*'], sessions: ['a', 'b'] }).key);
    assert.equal(keys.create({ name: 'c', scopes: ['*'], sessions: ['b'] }, star).createdBy, star.id);
    assert.equal(codeOf(() => keys.create({ name: 'c', scopes: ['*'], sessions: ['c'] }, star)), 'FORBIDDEN_SESSION');
    const narrow = principalOf(keys.create({ name: 'n', scopes: ['keys:manage', 'messages:send'] }).key);
    assert.equal(codeOf(() => keys.create({ name: 'c', scopes: ['messages:send', 'media:read'] }, narrow)), 'FORBIDDEN_SCOPE');
    assert.equal(keys.create({ name: 'c', scopes: ['messages:send'], sessions: ['any'] }, narrow).sessions?.[0], 'any');
  });

  it(`one key may hold at most ${MAX_KEYS_PER_KEY} keys it created; revoking one makes room; the operator has no cap`, () => {
    const { keys, principalOf } = setup();
    const parent = principalOf(keys.create({ name: 'p', scopes: ['keys:manage'] }).key);
    let last = '';
    for (let i = 0; i < MAX_KEYS_PER_KEY; i++) last = keys.create({ name: `c${i}`, scopes: ['keys:manage'] }, parent).id;
    assert.equal(codeOf(() => keys.create({ name: 'one-more', scopes: ['keys:manage'] }, parent)), 'LIMIT_REACHED');
    keys.revoke(last, parent);
    assert.equal(keys.create({ name: 'again', scopes: ['keys:manage'] }, parent).name, 'again');
    assert.equal(keys.list(parent).length, MAX_KEYS_PER_KEY);
    assert.ok(keys.create({ name: 'operator', scopes: ['*'] }).id);
  });

  it('the rate limit holds across a revoke of another key (the principal cache is rebuilt, the window is not)', () => {
    const { keys } = setup();
    const limited = keys.create({ name: 'l', scopes: ['sessions:read'], rateLimitPerMinute: 2 });
    const other = keys.create({ name: 'o', scopes: ['sessions:read'] });
    const digest = sha256(limited.key);
    keys.authenticate(digest);
    keys.authenticate(digest);
    keys.revoke(other.id);
    assert.throws(() => keys.authenticate(digest), (err: unknown) => err instanceof RateLimitedError && err.code === 'RATE_LIMITED' && err.retryAfterSeconds >= 1);
  });

  it('a key and every key minted from it, at any depth, share one window: minting children does not multiply the limit', () => {
    const { keys, principalOf } = setup();
    const limited = (p: { key: string }) => () => keys.authenticate(sha256(p.key));
    const refused = (fn: () => unknown) => assert.throws(fn, (err: unknown) => err instanceof RateLimitedError && err.code === 'RATE_LIMITED');
    const root = keys.create({ name: 'root', scopes: ['keys:manage', 'sessions:read'], rateLimitPerMinute: 3 });
    const rootPrincipal = principalOf(root.key); // hit 1
    const children = Array.from({ length: 5 }, (_, i) => keys.create({ name: `child${i}`, scopes: ['keys:manage', 'sessions:read'] }, rootPrincipal));
    assert.ok(children.every((c) => c.rateLimitPerMinute === 3));
    limited(children[0]!)(); // hit 2
    const grandchild = keys.create({ name: 'grandchild', scopes: ['sessions:read'] }, principalOf(children[1]!.key)); // hit 3
    for (const key of [root, ...children, grandchild]) refused(limited(key));

    // another family keeps its own window, and so does a sibling made by the operator
    const other = keys.create({ name: 'other', scopes: ['sessions:read'], rateLimitPerMinute: 3 });
    limited(other)();
    limited(other)();
  });

  it('the children of a revoked key still share one window', () => {
    const { keys, principalOf } = setup();
    const parent = keys.create({ name: 'parent', scopes: ['keys:manage', 'sessions:read'], rateLimitPerMinute: 2 });
    const parentPrincipal = keys.authenticate(sha256(parent.key)) as KeyPrincipal;
    const a = keys.create({ name: 'a', scopes: ['sessions:read'] }, parentPrincipal);
    const b = keys.create({ name: 'b', scopes: ['sessions:read'] }, parentPrincipal);
    keys.revoke(parent.id);
    assert.equal(principalOf(a.key).id, a.id); // the parent's hit and this one fill the window of 2
    assert.throws(() => keys.authenticate(sha256(b.key)), RateLimitedError);
  });
});
