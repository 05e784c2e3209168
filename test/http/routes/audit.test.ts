// GET /api/admin/audit against a real daemon: what an admin call records (who, what, when, request id, outcome),
// refusals of known callers recorded and anonymous ones not, filters, paging, who may read it, and pruning by
// audit.retentionDays at start.
import { after, before, describe, test } from 'node:test';
import { openDaemonDb } from '../../helpers/daemon-db.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startDaemon, type TestDaemon } from '../../helpers/daemon.js';
import { daemonEnv, runCli } from '../../helpers/cli.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

async function audit(query = '', key?: string | null): Promise<{ status: number; entries: any[]; total: number; body: any }> {
  const res = await daemon.request('GET', `/api/admin/audit${query}`, undefined, key);
  return { status: res.status, entries: res.body.data ?? [], total: Number(res.headers.get('X-Total-Count')), body: res.body };
}

async function newKey(scopes: string[], sessions?: string[]): Promise<{ id: string; key: string; name: string }> {
  const res = await daemon.request('POST', '/api/admin/keys', { name: `key-${scopes.join('+')}${sessions ? '-limited' : ''}`, scopes, ...(sessions ? { sessions } : {}) });
  assert.equal(res.status, 201);
  return res.body.data;
}

describe('GET /api/admin/audit', () => {
  let manager: { id: string; key: string; name: string };
  let reader: { id: string; key: string; name: string };

  before(async () => {
    manager = await newKey(['sessions:manage']);
    reader = await newKey(['sessions:read']);
  });

  test('an admin call records the actor, the action and target, the time, the request id and the outcome', async () => {
    const before = Date.now();
    const created = await daemon.request('POST', '/api/sessions', { name: 'shop', engine: 'sandbox' }, undefined, { 'X-Request-Id': 'ops-ticket-4711' });
    assert.equal(created.status, 201);
    const [entry] = (await audit('?action=session.create&target=shop')).entries;
    assert.deepEqual(
      { ...entry, id: undefined, at: undefined },
      {
        id: undefined,
        at: undefined,
        actor: { kind: 'master' },
        action: 'session.create',
        target: 'shop',
        requestId: 'ops-ticket-4711',
        outcome: 'succeeded',
        status: 201,
        details: { engine: 'sandbox', start: false },
        count: 1,
      },
    );
    assert.ok(Date.parse(entry.at) >= before - 1000 && Date.parse(entry.at) <= Date.now());

    assert.equal((await daemon.request('POST', '/api/sessions/shop/start', {}, manager.key)).status, 200);
    const [start] = (await audit('?action=session.start&target=shop')).entries;
    assert.deepEqual(start.actor, { kind: 'key', id: manager.id, name: manager.name });
    assert.equal(start.outcome, 'succeeded');
  });

  test('refusals of a known caller are recorded with their error; anonymous ones are not', async () => {
    const stop = await daemon.request('POST', '/api/sessions/shop/stop', {}, reader.key);
    assert.equal(stop.status, 403);
    const missing = await daemon.request('POST', '/api/sessions/nowhere/start', {});
    assert.equal(missing.status, 404);
    const invalid = await daemon.request('POST', '/api/sessions', { name: '!bad name' });
    assert.equal(invalid.status, 400);
    const countBefore = (await audit()).total;
    assert.equal((await daemon.request('DELETE', '/api/sessions/shop', {}, null)).status, 401);
    assert.equal((await daemon.request('DELETE', '/api/sessions/shop', {}, 'svc_not_a_real_key_000000000000')).status, 401);
    assert.equal((await audit()).total, countBefore, 'anonymous calls leave no entry');

    const failed = (await audit('?outcome=failed')).entries;
    const byAction = (action: string) => failed.find((e) => e.action === action && e.errorCode !== undefined && (action !== 'session.start' || e.target === 'nowhere'));
    assert.deepEqual(
      { actor: byAction('session.stop').actor, target: byAction('session.stop').target, status: byAction('session.stop').status, errorCode: byAction('session.stop').errorCode },
      { actor: { kind: 'key', id: reader.id, name: reader.name }, target: 'shop', status: 403, errorCode: 'FORBIDDEN_SCOPE' },
    );
    assert.deepEqual([byAction('session.start').status, byAction('session.start').errorCode], [404, 'SESSION_NOT_FOUND']);
    // refused before its body was valid: no target taken from an unchecked body
    const refused = failed.find((e) => e.action === 'session.create');
    assert.deepEqual([refused.target, refused.status, refused.errorCode, refused.details], [null, 400, 'VALIDATION_FAILED', undefined]);
  });

  test('a caller looping on a refused call leaves one entry whose count rises, shown by the route and the CLI', async () => {
    const looping = await newKey(['sessions:read']);
    const before = (await audit()).total;
    for (let i = 0; i < 300; i++) assert.equal((await daemon.request('POST', '/api/sessions/shop/stop', {}, looping.key)).status, 403);
    const { entries, total } = await audit(`?actor=${looping.id}`);
    assert.equal(total, 1);
    assert.equal((await audit()).total, before + 1);
    const [entry] = entries;
    assert.deepEqual([entry.action, entry.outcome, entry.errorCode, entry.count], ['session.stop', 'failed', 'FORBIDDEN_SCOPE', 300]);
    assert.ok(Date.parse(entry.lastAt) >= Date.parse(entry.at), JSON.stringify(entry));

    const cli = await runCli(['audit', '--actor', looping.id], { cwd: daemon.dataDir, env: daemonEnv(daemon) });
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /count/);
    assert.match(cli.stdout, /FORBIDDEN_SCOPE\s*│\s*300\s*│/);
  });

  test('reading the log is not an admin action', async () => {
    const { total } = await audit();
    await audit();
    await daemon.request('GET', '/api/sessions/shop');
    assert.equal((await audit()).total, total);
  });

  test('filters: action, actor (kind or key id), target, outcome, since and until; paging with X-Total-Count', async () => {
    for (const name of ['p1', 'p2', 'p3']) assert.equal((await daemon.request('POST', '/api/sessions', { name, engine: 'sandbox' }, manager.key)).status, 201);
    const all = await audit();
    assert.equal(all.status, 200);
    assert.equal(all.total, all.entries.length);
    assert.deepEqual(all.entries.map((e) => e.id), [...all.entries.map((e) => e.id)].sort((a, b) => b - a), 'newest first');

    const byKey = await audit(`?actor=${manager.id}&action=session.create`);
    assert.deepEqual(byKey.entries.map((e) => e.target), ['p3', 'p2', 'p1']);
    assert.equal((await audit('?actor=key')).entries.every((e) => e.actor.kind === 'key'), true);
    assert.equal((await audit('?actor=master')).entries.every((e) => e.actor.kind === 'master'), true);
    assert.deepEqual((await audit('?target=p2')).entries.map((e) => e.action), ['session.create']);
    assert.ok((await audit('?outcome=succeeded')).entries.every((e) => e.outcome === 'succeeded'));

    const page = await audit(`?actor=${manager.id}&action=session.create&limit=2&offset=1`);
    assert.equal(page.total, 3);
    assert.deepEqual(page.entries.map((e) => e.target), ['p2', 'p1']);

    const p2 = Date.parse(byKey.entries[1].at);
    const since = await audit(`?actor=${manager.id}&since=${new Date(p2).toISOString()}`);
    assert.ok(since.entries.every((e) => Date.parse(e.at) >= p2) && since.entries.some((e) => e.target === 'p3'));
    const until = await audit(`?actor=${manager.id}&action=session.create&until=${new Date(p2).toISOString()}`);
    assert.ok(until.entries.every((e) => Date.parse(e.at) <= p2) && until.entries.some((e) => e.target === 'p1'));
    assert.deepEqual((await audit('?since=2999-01-01T00:00:00Z')).entries, []);
  });

  test('bad filters are 400s naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['?action=session.explode', '/action'],
      ['?since=yesterday', '/since'],
      ['?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', '/until'],
      ['?limit=0', '/limit'],
      ['?actorr=master', '/actorr'],
      ['?outcome=maybe', '/outcome'],
    ];
    for (const [query, path] of cases) {
      const res = await audit(query);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.code, 'VALIDATION_FAILED');
      assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), `${query}: ${JSON.stringify(res.body.error)}`);
    }
  });

  test('the master key or audit:read (a key not limited to sessions) may read it', async () => {
    const auditor = await newKey(['audit:read']);
    const readable = await audit('', auditor.key);
    assert.equal(readable.status, 200);
    assert.ok(readable.total > 0);
    const limited = await newKey(['audit:read'], ['shop']);
    const refused = await audit('', limited.key);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'FORBIDDEN_SESSION');
    const noScope = await audit('', manager.key);
    assert.equal(noScope.status, 403);
    assert.equal(noScope.body.error.code, 'FORBIDDEN_SCOPE');
    assert.equal((await audit('', null)).status, 401);
  });
});

describe('audit.retentionDays', () => {
  test('entries older than the retention are pruned when the daemon starts; newer ones stay', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-audit-retention-'));
    let first: TestDaemon | undefined;
    let second: TestDaemon | undefined;
    try {
      first = await startDaemon({ dataDir, env: { GATEWAY_LOG_LEVEL: 'warn' } });
      for (const name of ['ancient', 'recent', 'fresh']) assert.equal((await first.request('POST', '/api/sessions', { name, engine: 'sandbox' })).status, 201);
      assert.equal(await first.stop(), 0);
      const db = await openDaemonDb(dataDir);
      const backdate = db.prepare('UPDATE audit_log SET at = ? WHERE target = ?');
      await backdate.run(Date.now() - 100 * 86_400_000, 'ancient');
      await backdate.run(Date.now() - 20 * 86_400_000, 'recent');
      await db.close();

      second = await startDaemon({ dataDir, config: 'audit:\n  retentionDays: 30\n', env: { GATEWAY_LOG_LEVEL: 'info' } });
      const res = await second.request('GET', '/api/admin/audit?action=session.create');
      assert.deepEqual(res.body.data.map((e: { target: string }) => e.target), ['fresh', 'recent']);
      assert.match(second.output(), /pruned old audit log entries/);
    } finally {
      await first?.stop();
      await second?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
