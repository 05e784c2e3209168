// `gateway webhooks` and `gateway events tail` (the built binary) against a real daemon.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliFor, daemonEnv } from '../helpers/cli.js';
import { spawn } from 'node:child_process';
import { startDaemon, BIN, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

const env = () => ({ PATH: process.env.PATH ?? '', ...daemonEnv(daemon) });

const gateway = cliFor(() => daemon);

describe('gateway webhooks', () => {
  test('create prints the key once; list, show, update, deliveries, delete', async () => {
    const human = await gateway('webhooks', 'create', 'http://127.0.0.1:9/hook', '--events', 'session.status,session.qr', '--session', 'shop', '--header', 'Authorization: Bearer abc', '--header', 'X-Tenant: acme', '--attempts', '2', '--delay', '1', '--policy', 'linear');
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /created webhook \d+/);
    assert.match(human.stdout, /signing key: [0-9a-f]{64}/);
    assert.match(human.stdout, /not be shown again/);

    const json = await gateway('--json', 'webhooks', 'create', 'http://127.0.0.1:9/other', '--hmac-key', 'my-own-key-0123456789');
    assert.equal(json.code, 0, json.stderr);
    const created = JSON.parse(json.stdout);
    assert.equal(created.hmacKey, 'my-own-key-0123456789');
    assert.deepEqual(created.events, []);

    const list = JSON.parse((await gateway('--json', 'webhooks', 'list')).stdout) as Array<Record<string, any>>;
    assert.equal(list.length, 2);
    const first = list.find((w) => w.url === 'http://127.0.0.1:9/hook')!;
    assert.deepEqual(first.events, ['session.status', 'session.qr']);
    assert.equal(first.session, 'shop');
    assert.deepEqual(first.headers, [
      { name: 'Authorization', value: 'Bearer abc' },
      { name: 'X-Tenant', value: 'acme' },
    ]);
    assert.deepEqual(first.retries, { attempts: 2, delaySeconds: 1, policy: 'linear' });
    assert.ok(list.every((w) => w.hmacKey === undefined));
    const table = await gateway('webhooks', 'list');
    assert.match(table.stdout, /127\.0\.0\.1:9\/hook/);
    assert.ok(!table.stdout.includes('my-own-key'));

    const show = await gateway('webhooks', 'show', String(first.id));
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /url\s+http:\/\/127\.0\.0\.1:9\/hook/);

    const updated = await gateway('--json', 'webhooks', 'update', String(first.id), '--disable', '--no-session-filter', '--policy', 'constant');
    assert.equal(updated.code, 0, updated.stderr);
    const u = JSON.parse(updated.stdout);
    assert.equal(u.enabled, false);
    assert.equal(u.session, null);
    assert.deepEqual(u.retries, { attempts: 2, delaySeconds: 1, policy: 'constant' });
    const nothing = await gateway('webhooks', 'update', String(first.id));
    assert.equal(nothing.code, 2);

    const log = await gateway('webhooks', 'deliveries', String(first.id), '--status', 'failed');
    assert.equal(log.code, 0, log.stderr);
    assert.match(log.stdout, /\(none\)/);

    const bad = await gateway('webhooks', 'create', 'http://127.0.0.1:9/x', '--header', 'Host: evil');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /VALIDATION_FAILED: .*cannot be overridden/);

    const removed = await gateway('webhooks', 'delete', String(first.id));
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, new RegExp(`webhook ${first.id} deleted`));
    const gone = await gateway('webhooks', 'show', String(first.id));
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /WEBHOOK_NOT_FOUND/);
    const left = JSON.parse((await gateway('--json', 'webhooks', 'list')).stdout) as unknown[];
    assert.equal(left.length, 1);
  });
});

describe('gateway events tail', () => {
  test('--json prints each event as one raw JSON line', async () => {
    const child = spawn(process.execPath, [BIN, '--json', 'events', 'tail', '--session', 'tail1', '--events', 'session.status'], {
      cwd: daemon.dataDir,
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const firstLine = new Promise<string>((done, fail) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const newline = out.indexOf('\n');
        if (newline >= 0) done(out.slice(0, newline));
      });
      child.once('exit', (code) => fail(new Error(`tail exited with ${code} before printing: ${stderr}`)));
    });
    try {
      await new Promise<void>((done, fail) => {
        const check = () => (/streaming events/.test(stderr) ? done() : undefined);
        child.stderr.on('data', check);
        child.once('exit', () => fail(new Error(`tail exited: ${stderr}`)));
        check();
      });
      const created = await daemon.request('POST', '/api/sessions', { name: 'tail1', start: true });
      assert.equal(created.status, 201);
      const line = await firstLine;
      assert.ok(line, `no event printed: ${stderr}`);
      const event = JSON.parse(line);
      assert.equal(event.event, 'session.status');
      assert.equal(event.session, 'tail1');
      assert.deepEqual(Object.keys(event), ['id', 'event', 'session', 'timestamp', 'payload']);
      child.kill('SIGINT');
      assert.equal(await exited, 0, stderr);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
