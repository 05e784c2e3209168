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
  const principalOf = async (key: string) => (await keys.authenticate(sha256(key))) as KeyPrincipal;
  return { keys, principalOf };
}

const codeOf = async (fn: () => Promise<unknown>): Promise<string> => {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err.code;
  }
  return 'none';
};

describe('ApiKeys', () => {
  it('a "*" key grants any scope, "*" included, within its sessions; a narrower key only what it holds', async () => {
    const { keys, principalOf } = setup();
    const star = await principalOf((await keys.create({ name: 'star', scopes: ['*'], sessions: ['a', 'b'] })).key);
    assert.equal((await keys.create({ name: 'c', scopes: ['*'], sessions: ['b'] }, star)).createdBy, star.id);
    assert.equal(await codeOf(() => keys.create({ name: 'c', scopes: ['*'], sessions: ['c'] }, star)), 'FORBIDDEN_SESSION');
    const narrow = await principalOf((await keys.create({ name: 'n', scopes: ['keys:manage', 'messages:send'] })).key);
    assert.equal(await codeOf(() => keys.create({ name: 'c', scopes: ['messages:send', 'media:read'] }, narrow)), 'FORBIDDEN_SCOPE');
    assert.equal((await keys.create({ name: 'c', scopes: ['messages:send'], sessions: ['any'] }, narrow)).sessions?.[0], 'any');
  });

  it(`one key may hold at most ${MAX_KEYS_PER_KEY} keys it created; revoking one makes room; the operator has no cap`, async () => {
    const { keys, principalOf } = setup();
    const parent = await principalOf((await keys.create({ name: 'p', scopes: ['keys:manage'] })).key);
    let last = '';
    for (let i = 0; i < MAX_KEYS_PER_KEY; i++) last = (await keys.create({ name: `c${i}`, scopes: ['keys:manage'] }, parent)).id;
    assert.equal(await codeOf(() => keys.create({ name: 'one-more', scopes: ['keys:manage'] }, parent)), 'LIMIT_REACHED');
    await keys.revoke(last, parent);
    assert.equal((await keys.create({ name: 'again', scopes: ['keys:manage'] }, parent)).name, 'again');
    assert.equal((await keys.list(parent)).length, MAX_KEYS_PER_KEY);
    assert.ok((await keys.create({ name: 'operator', scopes: ['*'] })).id);
  });

  it('the rate limit holds across a revoke of another key (the principal cache is rebuilt, the window is not)', async () => {
    const { keys } = setup();
    const limited = await keys.create({ name: 'l', scopes: ['sessions:read'], rateLimitPerMinute: 2 });
    const other = await keys.create({ name: 'o', scopes: ['sessions:read'] });
    const digest = sha256(limited.key);
    await keys.authenticate(digest);
    await keys.authenticate(digest);
    await keys.revoke(other.id);
    await assert.rejects(() => keys.authenticate(digest), (err: unknown) => err instanceof RateLimitedError && err.code === 'RATE_LIMITED' && err.retryAfterSeconds >= 1);
  });

  it('a key and every key minted from it, at any depth, share one window: minting children does not multiply the limit', async () => {
    const { keys, principalOf } = setup();
    const limited = (p: { key: string }) => () => keys.authenticate(sha256(p.key));
    const refused = (fn: () => Promise<unknown>) => assert.rejects(fn, (err: unknown) => err instanceof RateLimitedError && err.code === 'RATE_LIMITED');
    const root = await keys.create({ name: 'root', scopes: ['keys:manage', 'sessions:read'], rateLimitPerMinute: 3 });
    const rootPrincipal = await principalOf(root.key); // hit 1
    const children = [];
    for (let i = 0; i < 5; i++) children.push(await keys.create({ name: `child${i}`, scopes: ['keys:manage', 'sessions:read'] }, rootPrincipal));
    assert.ok(children.every((c) => c.rateLimitPerMinute === 3));
    await limited(children[0]!)(); // hit 2
    const grandchild = await keys.create({ name: 'grandchild', scopes: ['sessions:read'] }, await principalOf(children[1]!.key)); // hit 3
    for (const key of [root, ...children, grandchild]) await refused(limited(key));

    // another family keeps its own window, and so does a sibling made by the operator
    const other = await keys.create({ name: 'other', scopes: ['sessions:read'], rateLimitPerMinute: 3 });
    await limited(other)();
    await limited(other)();
  });

  it('the children of a revoked key still share one window', async () => {
    const { keys, principalOf } = setup();
    const parent = await keys.create({ name: 'parent', scopes: ['keys:manage', 'sessions:read'], rateLimitPerMinute: 2 });
    const parentPrincipal = (await keys.authenticate(sha256(parent.key))) as KeyPrincipal;
    const a = await keys.create({ name: 'a', scopes: ['sessions:read'] }, parentPrincipal);
    const b = await keys.create({ name: 'b', scopes: ['sessions:read'] }, parentPrincipal);
    await keys.revoke(parent.id);
    assert.equal((await principalOf(a.key)).id, a.id); // the parent's hit and this one fill the window of 2
    await assert.rejects(() => keys.authenticate(sha256(b.key)), RateLimitedError);
  });

  it('a cached key answers without reading the store; a revocation made while a lookup was reading is not cached over', async () => {
    const repo = createKeysRepo(openDatabase(':memory:'));
    let lookups = 0;
    /** while set, a lookup's answer waits for it (as a slow store's would) */
    let gate: Promise<void> | undefined;
    const findByHash = repo.findByHash;
    repo.findByHash = async (hash) => {
      lookups += 1;
      const row = await findByHash(hash);
      await gate;
      return row;
    };
    const keys = new ApiKeys(repo);
    const made = await keys.create({ name: 'k', scopes: ['sessions:read'] });
    await keys.authenticate(sha256(made.key));
    await keys.authenticate(sha256(made.key));
    assert.equal(lookups, 1);
    // a lookup under way when the key is revoked answers with what it read, but does not keep it
    const other = await keys.create({ name: 'o', scopes: ['sessions:read'] });
    let open!: () => void;
    gate = new Promise((done) => (open = done));
    const reading = keys.authenticate(sha256(other.key));
    await keys.revoke(other.id);
    open();
    assert.equal((await reading)?.kind, 'key');
    assert.equal(await keys.authenticate(sha256(other.key)), undefined);
  });
});
