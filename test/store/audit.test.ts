// The audit log repository and service: filters and paging over stored entries, pruning by age in batches, and a
// record that fails to write logged rather than thrown at the action that already happened.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuditLog, REFUSAL_ENTRIES_PER_MINUTE, REFUSAL_WINDOW_MS, type AuditRecord } from '../../src/audit/log.js';
import type { Logger } from '../../src/logger.js';
import { createAuditRepo, type NewAuditEntry } from '../../src/store/audit.js';
import { openDatabase } from '../../src/store/db.js';

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;

const entry = (over: Partial<NewAuditEntry>): NewAuditEntry => ({
  at: NOW,
  actorKind: 'master',
  actorId: null,
  actorName: null,
  action: 'session.start',
  target: 'shop',
  requestId: 'r',
  outcome: 'succeeded',
  status: 200,
  errorCode: null,
  details: null,
  ...over,
});

/** A logger that keeps what was logged at error level. */
function recordingLogger(): { logger: Logger; errors: Array<{ fields: object; message: string }> } {
  const errors: Array<{ fields: object; message: string }> = [];
  const logger = { error: (fields: object, message: string) => errors.push({ fields, message }), info: () => {} } as unknown as Logger;
  return { logger, errors };
}

describe('audit repository', () => {
  it('lists newest first with every filter and counts the whole match', async () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    repo.insert(entry({ at: NOW - 3 * DAY, action: 'session.create' }));
    repo.insert(entry({ at: NOW - 2 * DAY, actorKind: 'key', actorId: 'k1', actorName: 'bot', outcome: 'failed', status: 403, errorCode: 'FORBIDDEN_SCOPE' }));
    repo.insert(entry({ at: NOW - DAY, actorKind: 'key', actorId: 'k2', actorName: 'ops', target: 'other' }));
    repo.insert(entry({ at: NOW, action: 'settings.update', target: null, details: '{"fields":["autoPersist"]}' }));

    const ids = async (filter: object, limit = 100, offset = 0) => (await repo.list(filter, limit, offset)).rows.map((r) => r.at);
    assert.deepEqual(await ids({}), [NOW, NOW - DAY, NOW - 2 * DAY, NOW - 3 * DAY]);
    assert.deepEqual(await ids({ action: 'session.start' }), [NOW - DAY, NOW - 2 * DAY]);
    assert.deepEqual(await ids({ actor: 'key' }), [NOW - DAY, NOW - 2 * DAY]);
    assert.deepEqual(await ids({ actor: 'k1' }), [NOW - 2 * DAY]);
    assert.deepEqual(await ids({ actor: 'master' }), [NOW, NOW - 3 * DAY]);
    assert.deepEqual(await ids({ target: 'other' }), [NOW - DAY]);
    assert.deepEqual(await ids({ outcome: 'failed' }), [NOW - 2 * DAY]);
    assert.deepEqual(await ids({ since: NOW - 2 * DAY, until: NOW - DAY }), [NOW - DAY, NOW - 2 * DAY]);
    assert.deepEqual(await ids({ actor: 'key', since: NOW - DAY }), [NOW - DAY]);
    const page = await repo.list({ actor: 'master' }, 1, 1);
    assert.deepEqual([page.rows.map((r) => r.at), page.total], [[NOW - 3 * DAY], 2]);
    const [settings] = (await repo.list({ action: 'settings.update' }, 1, 0)).rows;
    assert.deepEqual([settings!.target, settings!.details], [null, '{"fields":["autoPersist"]}']);
    await db.close();
  });

  it('prunes entries older than the cut-off, past one batch, and keeps the rest', async () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    await db.transaction(async () => {
      for (let i = 0; i < 12_345; i += 1) repo.insert(entry({ at: NOW - 100 * DAY + i }));
      for (let i = 0; i < 7; i += 1) repo.insert(entry({ at: NOW - DAY + i }));
    })();
    assert.equal(await repo.pruneOlderThan(NOW - 90 * DAY), 12_345);
    assert.equal((await repo.list({}, 1000, 0)).total, 7);
    assert.equal(await repo.pruneOlderThan(NOW - 90 * DAY), 0);
    await db.close();
  });
});

describe('audit log service', () => {
  it('prunes by retentionDays and shows entries with their actor, details and error code', async () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    const { logger } = recordingLogger();
    const log = new AuditLog({ repo, beginWrite: () => {}, retentionDays: 30, logger });
    repo.insert(entry({ at: Date.now() - 31 * DAY }));
    log.record({ actor: { kind: 'key', id: 'k1', name: 'bot' }, action: 'key.revoke', target: 'k9', requestId: 'r1', outcome: 'failed', status: 404, errorCode: 'KEY_NOT_FOUND' });
    log.record({ actor: { kind: 'system' }, action: 'backup.create', outcome: 'succeeded', details: { file: 'backups/gateway-1.db' } });
    assert.equal(await log.prune(), 1);
    const { rows, total } = await log.list({}, 10, 0);
    assert.equal(total, 2);
    assert.deepEqual(
      rows.map(({ id: _id, at: _at, ...rest }) => rest),
      [
        { actor: { kind: 'system' }, action: 'backup.create', target: null, requestId: null, outcome: 'succeeded', status: null, details: { file: 'backups/gateway-1.db' }, count: 1 },
        { actor: { kind: 'key', id: 'k1', name: 'bot' }, action: 'key.revoke', target: 'k9', requestId: 'r1', outcome: 'failed', status: 404, errorCode: 'KEY_NOT_FOUND', count: 1 },
      ],
    );
    await db.close();
  });

  it('a write that fails is logged, not thrown', async () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    await db.close();
    const { logger, errors } = recordingLogger();
    const log = new AuditLog({ repo, beginWrite: () => {}, retentionDays: 30, logger });
    assert.doesNotThrow(() => log.record({ actor: { kind: 'master' }, action: 'session.delete', target: 'shop', requestId: 'r2', outcome: 'succeeded' }));
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.message, 'could not write an audit log entry');
    assert.deepEqual([(errors[0]!.fields as { action: string }).action, (errors[0]!.fields as { requestId: string }).requestId], ['session.delete', 'r2']);
  });

  it('a refusal repeated by one caller within a minute is one entry with a count, first and last time', async () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    const { logger } = recordingLogger();
    const log = new AuditLog({ repo, beginWrite: () => {}, retentionDays: 30, logger });
    const refused = (over: Partial<AuditRecord> = {}): AuditRecord => ({
      actor: { kind: 'client', id: 't1', name: 'visitor' }, action: 'client_token.mint', target: 'shop', requestId: 'r', outcome: 'failed', status: 403, errorCode: 'ACTION_NOT_ALLOWED', ...over,
    });
    const start = Date.now();
    for (let i = 0; i < 1000; i++) log.record(refused({ requestId: `r${i}` }), start + i);
    log.record(refused({ errorCode: 'FORBIDDEN_SESSION' }), start + 1000); // another reason: its own entry
    log.record(refused({ actor: { kind: 'client', id: 't2', name: 'other' } }), start + 1000); // another caller: its own
    log.record(refused(), start + REFUSAL_WINDOW_MS); // the window of the first is over: a new entry
    // actions that succeed are never merged
    log.record({ actor: { kind: 'master' }, action: 'session.start', target: 'shop', outcome: 'succeeded', status: 200 }, start);
    log.record({ actor: { kind: 'master' }, action: 'session.start', target: 'shop', outcome: 'succeeded', status: 200 }, start);

    const { rows, total } = await log.list({}, 100, 0);
    assert.equal(total, 6);
    assert.equal(await db.prepare('SELECT COUNT(*) FROM audit_log').pluck().get(), 6);
    const first = rows.find((r) => r.actor.id === 't1' && r.errorCode === 'ACTION_NOT_ALLOWED' && r.at === new Date(start).toISOString())!;
    assert.deepEqual([first.count, first.lastAt, first.requestId], [1000, new Date(start + 999).toISOString(), 'r0']);
    const later = rows.find((r) => r.actor.id === 't1' && r.errorCode === 'ACTION_NOT_ALLOWED' && r !== first)!;
    assert.deepEqual([later.count, later.lastAt], [1, undefined]);
    assert.deepEqual(rows.filter((r) => r.outcome === 'succeeded').map((r) => r.count), [1, 1]);
    await db.close();
  });

  it('repeats counted while the entry\'s id is on its way are written to it once it is known, and a read waits for them', async () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    // the id comes back late, as PostgreSQL's RETURNING id does after a round trip
    let open!: () => void;
    const gate = new Promise<void>((done) => (open = done));
    const insertReturningId = repo.insertReturningId;
    repo.insertReturningId = async (row) => {
      const id = await insertReturningId(row);
      await gate;
      return id;
    };
    const { logger, errors } = recordingLogger();
    const log = new AuditLog({ repo, beginWrite: () => {}, retentionDays: 30, logger });
    const refused: AuditRecord = { actor: { kind: 'key', id: 'k1', name: 'bot' }, action: 'key.revoke', target: 'k9', outcome: 'failed', status: 404, errorCode: 'KEY_NOT_FOUND' };
    const start = Date.now();
    for (let i = 0; i < 5; i++) log.record(refused, start + i);
    // the window closes while the id is still unknown: its repeats follow the id
    log.flush(start + REFUSAL_WINDOW_MS);
    const listed = log.list({}, 10, 0);
    setTimeout(open, 20);
    const { rows, total } = await listed;
    assert.equal(total, 1);
    assert.deepEqual([rows[0]!.count, rows[0]!.lastAt], [5, new Date(start + 4).toISOString()]);
    assert.deepEqual(errors, []);
    await db.close();
  });

  it(`one caller adds at most ${REFUSAL_ENTRIES_PER_MINUTE} new refusal entries a minute; the rest are counted in the daemon's log`, async () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    const warnings: Array<{ fields: { caller: string; count: number }; message: string }> = [];
    const logger = { error: () => {}, info: () => {}, warn: (fields: { caller: string; count: number }, message: string) => warnings.push({ fields, message }) } as unknown as Logger;
    const log = new AuditLog({ repo, beginWrite: () => {}, retentionDays: 30, logger });
    const now = Date.now();
    // every call refused for another reason (target ids differ too): coalescing alone would keep them all
    for (let i = 0; i < 500; i++) {
      log.record({ actor: { kind: 'key', id: 'k1', name: 'bot' }, action: 'key.revoke', target: `k${i}`, outcome: 'failed', status: 400, errorCode: `REASON_${i}` }, now + i);
    }
    log.record({ actor: { kind: 'key', id: 'k2', name: 'calm' }, action: 'key.revoke', target: 'x', outcome: 'failed', status: 404, errorCode: 'KEY_NOT_FOUND' }, now + 500);
    assert.equal((await log.list({ actor: 'k1' }, 1000, 0)).total, REFUSAL_ENTRIES_PER_MINUTE);
    assert.equal((await log.list({ actor: 'k2' }, 1000, 0)).total, 1, 'another caller is not held back');
    assert.deepEqual(warnings.map((w) => w.fields), [{ caller: 'key:k1', count: 500 - REFUSAL_ENTRIES_PER_MINUTE }]);
    await db.close();
  });
});
