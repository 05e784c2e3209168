// `gateway webhooks` and `gateway events tail` (the built binary) against a real daemon.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliFor, daemonEnv, runCli } from '../helpers/cli.js';
import { startDaemon, waitFor, BIN, type TestDaemon } from '../helpers/daemon.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { assertEvent } from '../helpers/event-contract.js';

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

    const json = await gateway('--json', 'webhooks', 'create', 'http://127.0.0.1:9/other', '--hmac-key', 'my-own-key-0123456789', '--signature-scheme', 'timestamp.body');
    assert.equal(json.code, 0, json.stderr);
    const created = JSON.parse(json.stdout);
    assert.equal(created.hmacKey, 'my-own-key-0123456789');
    assert.equal(created.signatureScheme, 'timestamp.body');
    assert.deepEqual(created.events, []);

    const list = JSON.parse((await gateway('--json', 'webhooks', 'list')).stdout) as Array<Record<string, any>>;
    assert.equal(list.length, 2);
    const first = list.find((w) => w.url === 'http://127.0.0.1:9/hook')!;
    assert.deepEqual(first.events, ['session.status', 'session.qr']);
    assert.equal(first.session, 'shop');
    assert.deepEqual(first.headers, [
      { name: 'Authorization', value: '********' },
      { name: 'X-Tenant', value: '********' },
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
      assertEvent(event, 'gateway events tail line');
      assert.equal(event.event, 'session.status');
      assert.equal(event.session, 'tail1');
      assert.deepEqual(Object.keys(event), ['id', 'event', 'session', 'seq', 'timestamp', 'payload']);
      child.kill('SIGINT');
      assert.equal(await exited, 0, stderr);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('gateway webhooks and events tail with a webhooks:manage API key', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  /** Creates an API key through the admin route and returns its secret. */
  async function apiKey(name: string, scopes: string[], sessions?: string[]): Promise<string> {
    const res = await daemon.request('POST', '/api/admin/keys', { name, scopes, ...(sessions ? { sessions } : {}) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.key as string;
  }

  /** `gateway …` sending `key` instead of the master key. */
  const withKey = (key: string, ...args: string[]) => runCli(args, { cwd: daemon.dataDir, env: { GATEWAY_URL: daemon.url, GATEWAY_MASTER_KEY: key } });

  test('deliveries and retry: a failed delivery is re-sent with a fresh budget and succeeds', async () => {
    const key = await apiKey('cli-hooks', ['webhooks:manage']);
    const reader = await apiKey('cli-reader', ['sessions:read']);
    receiver.answer = () => 500;
    const created = await withKey(key, '--json', 'webhooks', 'create', `${receiver.base}/cli-retry`, '--session', 'cliretry', '--events', 'session.status', '--attempts', '0');
    assert.equal(created.code, 0, created.stderr);
    const webhook = JSON.parse(created.stdout) as { id: number };
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'cliretry', start: true })).status, 201);
    const [first] = await receiver.waitForCount(1);
    const deliveryId = first!.json.id as string;

    const failed = await waitFor(async () => {
      const log = await withKey(key, '--json', 'webhooks', 'deliveries', String(webhook.id), '--status', 'failed');
      assert.equal(log.code, 0, log.stderr);
      const rows = JSON.parse(log.stdout) as Array<Record<string, any>>;
      return rows.length === 1 ? rows : undefined;
    }, 10_000, 'the delivery to fail');
    assert.equal(failed[0]!.id, deliveryId);
    assert.equal(failed[0]!.attempts, 1);
    assert.equal(failed[0]!.lastError, 'HTTP 500');
    const table = await withKey(key, 'webhooks', 'deliveries', String(webhook.id));
    assert.equal(table.code, 0, table.stderr);
    assert.ok(table.stdout.includes(deliveryId));
    assert.match(table.stdout, /failed/);

    // a key without webhooks:manage is refused: the CLI really sends the key it is given
    const denied = await withKey(reader, 'webhooks', 'retry', String(webhook.id), deliveryId);
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /FORBIDDEN_SCOPE/);
    assert.equal(receiver.received.length, 1);

    receiver.answer = () => 200;
    const retried = await withKey(key, 'webhooks', 'retry', String(webhook.id), deliveryId);
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal(retried.stdout, `delivery ${deliveryId} re-queued (session.status, 1 attempts so far)\n`);
    const [, again] = await receiver.waitForCount(2);
    assert.equal(again!.json.id, deliveryId);
    assert.ok(again!.raw.equals(first!.raw), 'the same body is sent again');
    assert.equal(again!.headers['x-webhook-attempt'], '2');
    const succeeded = await waitFor(async () => {
      const rows = JSON.parse((await withKey(key, '--json', 'webhooks', 'deliveries', String(webhook.id), '--status', 'succeeded')).stdout) as Array<Record<string, any>>;
      return rows.length === 1 ? rows[0] : undefined;
    }, 10_000, 'the retried delivery to succeed');
    assert.equal(succeeded.id, deliveryId);
    assert.equal(succeeded.attempts, 2);
    assert.equal(succeeded.lastStatusCode, 200);

    // --json prints the re-queued delivery; an unknown delivery is an error
    const json = await withKey(key, '--json', 'webhooks', 'retry', String(webhook.id), deliveryId);
    assert.equal(json.code, 0, json.stderr);
    const requeued = JSON.parse(json.stdout);
    assert.equal(requeued.id, deliveryId);
    assert.equal(requeued.status, 'pending');
    await receiver.waitForCount(3);
    const unknown = await withKey(key, 'webhooks', 'retry', String(webhook.id), '00000000-0000-0000-0000-000000000000');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /DELIVERY_NOT_FOUND/);
  });

  test('events tail streams events with the key; a session-limited key hears only its sessions; no scope, no stream', async () => {
    const key = await apiKey('cli-tail', ['webhooks:manage']);
    const limited = await apiKey('cli-tail-limited', ['webhooks:manage'], ['tail-mine']);
    const reader = await apiKey('cli-tail-reader', ['sessions:read']);

    const refused = await withKey(reader, 'events', 'tail');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /FORBIDDEN_SCOPE/);

    const everything = tail(key, '--events', 'session.status');
    const mine = tail(limited, '--events', 'session.status');
    try {
      await Promise.all([everything.ready, mine.ready]);
      for (const name of ['tail-other', 'tail-mine']) assert.equal((await daemon.request('POST', '/api/sessions', { name, start: true })).status, 201);
      const seen = await everything.lines(2);
      assert.deepEqual(seen.map((e) => `${e.session}:${e.event}:${e.payload.status}`).sort(), ['tail-mine:session.status:CONNECTING', 'tail-other:session.status:CONNECTING']);
      const own = await mine.lines(1);
      assert.equal(own[0]!.session, 'tail-mine');
      await sleep(300);
      assert.equal(mine.parsed().length, 1, `the limited key heard only tail-mine: ${JSON.stringify(mine.parsed())}`);
      assert.equal(await everything.stop(), 0);
      assert.equal(await mine.stop(), 0);
    } finally {
      everything.kill();
      mine.kill();
    }
  });
});

/** Runs `gateway --json events tail …` with `key` in the background. */
function tail(key: string, ...args: string[]) {
  const child = spawn(process.execPath, [BIN, '--json', 'events', 'tail', ...args], {
    cwd: daemon.dataDir,
    env: { PATH: process.env.PATH ?? '', GATEWAY_URL: daemon.url, GATEWAY_MASTER_KEY: key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const parsed = () =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: string; event: string; session: string; payload: any });
  return {
    ready: waitFor(() => /streaming events/.test(stderr) || child.exitCode !== null, 10_000, 'the tail to connect').then(() => {
      if (child.exitCode !== null) throw new Error(`tail exited with ${child.exitCode}: ${stderr}`);
    }),
    parsed,
    lines: (count: number) => waitFor(() => (parsed().length >= count ? parsed() : undefined), 10_000, `${count} lines from the tail (stderr: ${stderr})`),
    async stop() {
      child.kill('SIGINT');
      return exited;
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
