// `gateway doctor` on a daemon whose store is PostgreSQL: no advice that only fits SQLite (a gateway.db to create or
// restore, its write-ahead log, `gateway backup` and backup.schedule, which a PostgreSQL store refuses), but pg_dump.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CLUSTER_SECRET, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { daemonEnv, runCli } from '../helpers/cli.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

interface Report {
  ok: boolean;
  checks: Array<{ id: string; verdict: 'ok' | 'warn' | 'fail'; detail: string; fix?: string }>;
}

describe('gateway doctor on PostgreSQL', () => {
  let pg: TestPostgres;
  let daemon: TestDaemon;
  before(async () => {
    pg = await startPostgres();
    daemon = await startDaemon({ env: { GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: pg.url, GATEWAY_LOG_LEVEL: 'warn' } });
  });
  after(async () => {
    await daemon?.cleanup();
    pg?.stop();
  });

  test('gives PostgreSQL advice: pg_dump, no gateway.db, WAL, restore or backup.schedule', async () => {
    const run = await runCli(['--json', 'doctor'], {
      cwd: daemon.dataDir,
      env: { ...daemonEnv(daemon), GATEWAY_DATA_DIR: daemon.dataDir, GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: pg.url, GATEWAY_CLUSTER_SECRET: CLUSTER_SECRET },
    });
    const report = JSON.parse(run.stdout) as Report;
    const byId = new Map(report.checks.map((c) => [c.id, c]));
    assert.equal(byId.get('daemon')?.verdict, 'ok', run.stdout);
    assert.equal(byId.get('database')?.verdict, 'ok');
    assert.match(byId.get('database')!.detail, /PostgreSQL.*pg_dump/);
    assert.equal(byId.has('wal'), false);
    assert.equal(byId.get('backups')?.verdict, 'ok');
    assert.match(byId.get('backups')!.detail, /pg_dump/);
    const advice = report.checks.map((c) => `${c.detail} ${c.fix ?? ''}`).join('\n');
    assert.doesNotMatch(advice, /gateway\.db|gateway restore|backup\.schedule \(e\.g\.|quick_check|SQLite fails/);
    assert.equal(run.code, 0, run.stdout);
  });
});
