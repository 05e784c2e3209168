// `gateway doctor` end to end: it passes a healthy daemon, and finds each fault a test plants (loose permissions,
// stuck sessions, a failing webhook, an unreachable S3, a corrupt database copy, a weak master key), each with its fix.
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, MASTER_KEY, pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { daemonEnv, runCli } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

interface Report {
  ok: boolean;
  checks: Array<{ id: string; verdict: 'ok' | 'warn' | 'fail'; detail: string; fix?: string }>;
}

async function doctor(env: Record<string, string>, cwd: string, ...flags: string[]): Promise<{ code: number; report: Report; stderr: string }> {
  const run = await runCli(['--json', 'doctor', ...flags], { cwd, env });
  return { code: run.code, report: JSON.parse(run.stdout) as Report, stderr: run.stderr };
}

const check = (report: Report, id: string) => {
  const found = report.checks.find((c) => c.id === id);
  assert.ok(found, `no ${id} check in ${JSON.stringify(report.checks.map((c) => c.id))}`);
  return found;
};

describe('gateway doctor', () => {
  let receiver: Receiver;
  let daemon: TestDaemon;
  const env = () => ({ ...daemonEnv(daemon), GATEWAY_DATA_DIR: daemon.dataDir });

  before(async () => {
    receiver = await startReceiver();
    daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
    await pairedSession(daemon, 'well', '+15550430001');
    await pairedSession(daemon, 'peer', '+15550430002');
    const hook = await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/good`, events: ['message.sent'] });
    assert.equal(hook.status, 201);
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'well', chatId: '+15550430002', type: 'text', text: 'hello' });
    assert.equal(sent.status, 200);
    await receiver.waitForCount(1, '/good');
    assert.equal((await daemon.request('POST', '/api/admin/backups', {})).status, 201);
  });
  after(async () => {
    await daemon?.cleanup();
    await receiver?.close();
  });

  test('a healthy daemon passes: exit 0, every check ok, the same in the table for people', async () => {
    const { code, report, stderr } = await doctor(env(), daemon.dataDir);
    assert.equal(code, 0, stderr + JSON.stringify(report, null, 2));
    assert.equal(report.ok, true);
    for (const id of ['config', 'master-key', 'permissions', 'database', 'wal', 'daemon', 'sessions', 'webhook-backlog', 'webhooks-failing', 's3', 'backups', 'node', 'baileys']) {
      assert.equal(check(report, id).verdict, 'ok', JSON.stringify(check(report, id)));
    }
    assert.match(check(report, 'sessions').detail, /2 sessions \(2 CONNECTED/);
    const table = await runCli(['doctor'], { cwd: daemon.dataDir, env: env() });
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^OK +daemon +gateway \S+ answers at http:\/\/127\.0\.0\.1:\d+/m);
    assert.match(table.stdout, /\d+ ok, \d+ warn, 0 fail\n$/);
  });

  test('finds loose permissions, stuck sessions, a failing webhook and an unreachable S3; exit 1 with the fixes', async () => {
    chmodSync(join(daemon.dataDir, 'gateway.db'), 0o644);
    // waiting for its QR, and banned
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'waiting', start: true })).status, 201);
    await pairedSession(daemon, 'banned', '+15550430003');
    assert.equal((await daemon.request('POST', '/api/sandbox/sessions/banned/disconnect', { reason: 'TEMPORARY_BAN' })).status, 200);
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/banned')).body.data.statusReason === 'TEMPORARY_BAN', 5000, 'banned');
    // a receiver that answers 500
    receiver.answer = (delivery) => (delivery.path === '/broken' ? 500 : 200);
    const broken = await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/broken`, events: ['message.sent'], retries: { attempts: 5, delaySeconds: 60 } });
    assert.equal(broken.status, 201);
    await daemon.request('POST', '/api/messages/send', { session: 'well', chatId: '+15550430002', type: 'text', text: 'to the broken hook' });
    await receiver.waitForCount(1, '/broken');
    // S3 on a port nobody listens at
    const closed = await freePort();
    const s3 = await daemon.request('PUT', '/api/admin/settings', { s3: { endpoint: `http://127.0.0.1:${closed}`, bucket: 'doctor-bucket', accessKeyId: 'AKIADOCTOR', secretAccessKey: 'doctor-secret-0123456789', forcePathStyle: true } });
    assert.equal(s3.status, 200, JSON.stringify(s3.body));
    await new Promise((r) => setTimeout(r, 1500));

    const { code, report } = await doctor(env(), daemon.dataDir, '--stuck-after', '1', '--failing-after', '0');
    assert.equal(code, 1);
    assert.equal(report.ok, false);
    const permissions = check(report, 'permissions');
    assert.equal(permissions.verdict, 'fail');
    assert.match(permissions.detail, /gateway\.db \(644\)/);
    assert.match(permissions.fix!, /chmod 600/);
    const sessions = check(report, 'sessions');
    assert.equal(sessions.verdict, 'fail');
    assert.match(sessions.detail, /waiting CONNECTING\/SCAN_QR/);
    assert.match(sessions.detail, /banned DISCONNECTED\/TEMPORARY_BAN/);
    assert.doesNotMatch(sessions.detail, /stuck: .*\bwell\b/);
    const failing = check(report, 'webhooks-failing');
    assert.equal(failing.verdict, 'fail');
    assert.match(failing.detail, new RegExp(`webhook ${broken.body.data.id} \\(.*/broken\\) failing for .*last: 500`));
    assert.doesNotMatch(failing.detail, /\/good/);
    assert.equal(check(report, 's3').verdict, 'fail');
    for (const c of report.checks.filter((x) => x.verdict !== 'ok')) assert.ok(c.fix, `${c.id} names its fix`);

    // the defaults give a waiting session 10 minutes and a failing webhook an hour: neither is reported yet
    const lenient = await doctor(env(), daemon.dataDir);
    assert.doesNotMatch(check(lenient.report, 'sessions').detail, /waiting/);
    assert.equal(check(lenient.report, 'webhooks-failing').verdict, 'ok');
    chmodSync(join(daemon.dataDir, 'gateway.db'), 0o600);
  });

  test('finds a corrupt database copy and a weak master key, with no daemon running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-doctor-corrupt-'));
    try {
      chmodSync(dir, 0o700);
      const copy = join(dir, 'gateway.db');
      const backup = (await daemon.request('GET', '/api/admin/backups')).body.data[0];
      copyFileSync(backup.path, copy);
      chmodSync(copy, 0o600);
      const bytes = readFileSync(copy);
      bytes.fill(0x5a, Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 8192);
      writeFileSync(copy, bytes);
      const idle = await freePort();
      const { code, report } = await doctor(
        { GATEWAY_DATA_DIR: dir, GATEWAY_MASTER_KEY: 'a'.repeat(40), GATEWAY_URL: `http://127.0.0.1:${idle}`, GATEWAY_PORT: String(idle) },
        dir,
      );
      assert.equal(code, 1);
      const database = check(report, 'database');
      assert.equal(database.verdict, 'fail');
      assert.match(database.detail, /fails PRAGMA quick_check/);
      assert.match(database.fix!, /gateway restore/);
      assert.equal(check(report, 'master-key').verdict, 'warn');
      assert.equal(check(report, 'daemon').verdict, 'fail');
      assert.equal(check(report, 'permissions').verdict, 'ok');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an invalid configuration is a failed check, not a crash, and exits 4 as every command does with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-doctor-config-'));
    try {
      writeFileSync(join(dir, 'gateway.yaml'), 'port: 70000\n', { mode: 0o600 });
      const { code, report, stderr } = await doctor({ GATEWAY_MASTER_KEY: MASTER_KEY }, dir);
      assert.equal(code, 4);
      assert.match(stderr, /gateway\.yaml.*\n.*port: must be <= 65535/);
      assert.equal(check(report, 'config').verdict, 'fail');
      assert.match(check(report, 'config').detail, /port: must be <= 65535/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
