// The audit log repository and service: filters and paging over stored entries, pruning by age in batches, and a
// record that fails to write logged rather than thrown at the action that already happened.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuditLog } from '../../src/audit/log.js';
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
  it('lists newest first with every filter and counts the whole match', () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    repo.insert(entry({ at: NOW - 3 * DAY, action: 'session.create' }));
    repo.insert(entry({ at: NOW - 2 * DAY, actorKind: 'key', actorId: 'k1', actorName: 'bot', outcome: 'failed', status: 403, errorCode: 'FORBIDDEN_SCOPE' }));
    repo.insert(entry({ at: NOW - DAY, actorKind: 'key', actorId: 'k2', actorName: 'ops', target: 'other' }));
    repo.insert(entry({ at: NOW, action: 'settings.update', target: null, details: '{"fields":["autoPersist"]}' }));

    const ids = (filter: object, limit = 100, offset = 0) => repo.list(filter, limit, offset).rows.map((r) => r.at);
    assert.deepEqual(ids({}), [NOW, NOW - DAY, NOW - 2 * DAY, NOW - 3 * DAY]);
    assert.deepEqual(ids({ action: 'session.start' }), [NOW - DAY, NOW - 2 * DAY]);
    assert.deepEqual(ids({ actor: 'key' }), [NOW - DAY, NOW - 2 * DAY]);
    assert.deepEqual(ids({ actor: 'k1' }), [NOW - 2 * DAY]);
    assert.deepEqual(ids({ actor: 'master' }), [NOW, NOW - 3 * DAY]);
    assert.deepEqual(ids({ target: 'other' }), [NOW - DAY]);
    assert.deepEqual(ids({ outcome: 'failed' }), [NOW - 2 * DAY]);
    assert.deepEqual(ids({ since: NOW - 2 * DAY, until: NOW - DAY }), [NOW - DAY, NOW - 2 * DAY]);
    assert.deepEqual(ids({ actor: 'key', since: NOW - DAY }), [NOW - DAY]);
    const page = repo.list({ actor: 'master' }, 1, 1);
    assert.deepEqual([page.rows.map((r) => r.at), page.total], [[NOW - 3 * DAY], 2]);
    const [settings] = repo.list({ action: 'settings.update' }, 1, 0).rows;
    assert.deepEqual([settings!.target, settings!.details], [null, '{"fields":["autoPersist"]}']);
    db.close();
  });

  it('prunes entries older than the cut-off, past one batch, and keeps the rest', () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    db.transaction(() => {
      for (let i = 0; i < 12_345; i += 1) repo.insert(entry({ at: NOW - 100 * DAY + i }));
      for (let i = 0; i < 7; i += 1) repo.insert(entry({ at: NOW - DAY + i }));
    })();
    assert.equal(repo.pruneOlderThan(NOW - 90 * DAY), 12_345);
    assert.equal(repo.list({}, 1000, 0).total, 7);
    assert.equal(repo.pruneOlderThan(NOW - 90 * DAY), 0);
    db.close();
  });
});

describe('audit log service', () => {
  it('prunes by retentionDays and shows entries with their actor, details and error code', () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    const { logger } = recordingLogger();
    const log = new AuditLog({ repo, beginWrite: () => {}, retentionDays: 30, logger });
    repo.insert(entry({ at: Date.now() - 31 * DAY }));
    log.record({ actor: { kind: 'key', id: 'k1', name: 'bot' }, action: 'key.revoke', target: 'k9', requestId: 'r1', outcome: 'failed', status: 404, errorCode: 'KEY_NOT_FOUND' });
    log.record({ actor: { kind: 'system' }, action: 'backup.create', outcome: 'succeeded', details: { file: 'backups/gateway-1.db' } });
    assert.equal(log.prune(), 1);
    const { rows, total } = log.list({}, 10, 0);
    assert.equal(total, 2);
    assert.deepEqual(
      rows.map(({ id: _id, at: _at, ...rest }) => rest),
      [
        { actor: { kind: 'system' }, action: 'backup.create', target: null, requestId: null, outcome: 'succeeded', status: null, details: { file: 'backups/gateway-1.db' } },
        { actor: { kind: 'key', id: 'k1', name: 'bot' }, action: 'key.revoke', target: 'k9', requestId: 'r1', outcome: 'failed', status: 404, errorCode: 'KEY_NOT_FOUND' },
      ],
    );
    db.close();
  });

  it('a write that fails is logged, not thrown', () => {
    const db = openDatabase(':memory:');
    const repo = createAuditRepo(db);
    db.close();
    const { logger, errors } = recordingLogger();
    const log = new AuditLog({ repo, beginWrite: () => {}, retentionDays: 30, logger });
    assert.doesNotThrow(() => log.record({ actor: { kind: 'master' }, action: 'session.delete', target: 'shop', requestId: 'r2', outcome: 'succeeded' }));
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.message, 'could not write an audit log entry');
    assert.deepEqual([(errors[0]!.fields as { action: string }).action, (errors[0]!.fields as { requestId: string }).requestId], ['session.delete', 'r2']);
  });
});
