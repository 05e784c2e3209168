// The webhook path on the async store without a daemon: registry (opened from the store), the outbox persister on the
// event bus, the dispatcher and its batched outcomes, on a real SQLite file and a local receiver. Each delivery arrives
// once, every outcome is written, a retry follows a failure, and a delivery re-queued by hand while its outcome is being
// written goes again rather than being overwritten by that outcome.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSecretBox } from '../../src/auth/secret-box.js';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { EventBus } from '../../src/events/bus.js';
import { createLogger } from '../../src/logger.js';
import { createGuardedDispatcher } from '../../src/net/guarded-dispatcher.js';
import { createTickTransaction, openDatabase, type Db, type TickTransaction } from '../../src/store/db.js';
import { createOutboxRepo, type OutboxRepo } from '../../src/store/outbox.js';
import { createWebhooksRepo } from '../../src/store/webhooks.js';
import { WebhookDispatcher, type AttemptOutcome } from '../../src/webhooks/dispatcher.js';
import { createOutbox } from '../../src/webhooks/outbox.js';
import { WebhookRegistry } from '../../src/webhooks/registry.js';

const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('webhook dispatch on the async store', () => {
  let dir: string;
  let db: Db;
  let tick: TickTransaction;
  let outbox: OutboxRepo;
  let registry: WebhookRegistry;
  let dispatcher: WebhookDispatcher;
  let bus: EventBus;
  let server: http.Server;
  let base: string;
  /** answers by path: a status code, or a function of the request count */
  let status: (path: string, seen: number) => number = () => 200;
  const received: Array<{ path: string; id: string; body: string }> = [];
  const box = createSecretBox(Buffer.alloc(32, 3));
  const outcomes: AttemptOutcome[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dispatcher-'));
    db = openDatabase(join(dir, 'gateway.db'));
    tick = createTickTransaction(db, (err) => assert.fail(String(err)));
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '';
        received.push({ path, id: String(req.headers['x-webhook-id']), body: Buffer.concat(chunks).toString() });
        res.statusCode = status(path, received.filter((r) => r.path === path).length);
        res.end();
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    outbox = createOutboxRepo(db);
    const policy = { allowPrivateTargets: true };
    registry = await WebhookRegistry.open({ webhooks: createWebhooksRepo(db, box), outbox, urlPolicy: policy });
    dispatcher = new WebhookDispatcher({
      outbox,
      box,
      registry,
      http: createGuardedDispatcher(policy),
      settings: { ...DEFAULT_CONFIG.webhooks, allowPrivateTargets: true },
      logger: createLogger('silent'),
      beginWrite: tick.join,
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    bus = new EventBus(tick.join);
    bus.addPersister(createOutbox({ registry, outbox, box, onWritten: (rows) => dispatcher.notify(rows) }));
    await dispatcher.start();
  });

  after(async () => {
    await dispatcher?.stop(1000);
    await new Promise<void>((done) => server.close(() => done()));
    // an outcome the dispatcher wrote as it stopped is committed before the file closes under it
    tick?.flush();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const statuses = async () =>
    (await db.prepare('SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status ORDER BY status').all()) as Array<{ status: string; n: number }>;

  it('delivers each event once to each matching webhook and writes every outcome', async () => {
    const a = await registry.create({ url: `${base}/a`, retries: { attempts: 0 } });
    const b = await registry.create({ url: `${base}/b`, events: ['session.status'], retries: { attempts: 0 } });
    assert.deepEqual(
      registry.matching('message.received', 's').map((w) => w.id),
      [a.id],
      'the cache follows the store once create has answered',
    );
    for (let i = 0; i < 300; i++) bus.emit('s', i % 3 === 0 ? 'session.status' : 'message.received', { i });
    await until('400 outcomes', () => outcomes.length >= 400);
    await tick.committed();
    assert.equal(received.filter((r) => r.path === '/a').length, 300);
    assert.equal(received.filter((r) => r.path === '/b').length, 100);
    assert.equal(new Set(received.map((r) => r.id)).size, 400, 'each delivery once');
    await until('every outcome written', async () => JSON.stringify(await statuses()) === JSON.stringify([{ status: 'succeeded', n: 400 }]));
    await registry.delete(a.id);
    await registry.delete(b.id);
  });

  it("a pairing QR is sealed in the stored delivery and sent in the clear (it carries the pairing's secret key)", async () => {
    received.length = 0;
    outcomes.length = 0;
    const qr = '2@pairing-ref,noise-key,identity-key,ADV-SECRET-IN-THE-CLEAR';
    const hook = await registry.create({ url: `${base}/qr`, events: ['session.qr'], retries: { attempts: 0 } });
    bus.emit('s', 'session.qr', { qr, expiresAt: new Date(Date.now() + 60_000).toISOString() });
    await until('the QR delivered', () => outcomes.some((o) => o.status === 'succeeded'));
    assert.equal(JSON.parse(received.find((r) => r.path === '/qr')!.body).payload.qr, qr);
    await tick.committed();
    const stored = (await db.prepare("SELECT body FROM deliveries WHERE event = 'session.qr'").pluck().all()) as string[];
    assert.equal(stored.length, 1);
    assert.ok(!stored[0]!.includes('ADV-SECRET'), stored[0]);
    assert.match(JSON.parse(stored[0]!).payload.qr, /^v1:/, 'sealed');
    await registry.delete(hook.id);
  });

  it('a failed attempt is retried; a delivery re-queued while its outcome is written goes again', async () => {
    received.length = 0;
    outcomes.length = 0;
    status = (path, seen) => (path === '/flaky' && seen === 1 ? 500 : path === '/down' ? 503 : 200);
    const flaky = await registry.create({ url: `${base}/flaky`, retries: { attempts: 2, delaySeconds: 0, policy: 'constant' } });
    bus.emit('s', 'message.received', { flaky: true });
    await until('the retry', () => outcomes.some((o) => o.status === 'succeeded'));
    assert.deepEqual(outcomes.map((o) => [o.status, o.attempts]), [['pending', 1], ['succeeded', 2]]);

    // a webhook that always fails: its one attempt ends failed; a re-queue made as that outcome is written sends it again
    const down = await registry.create({ url: `${base}/down`, retries: { attempts: 0 } });
    const recordOutcomes = outbox.recordOutcomes;
    let requeued: Promise<unknown> | undefined;
    outbox.recordOutcomes = async (batch) => {
      const mine = batch.find((o) => o.status === 'failed');
      // the re-queue lands while the failed outcome is on its way to the store
      if (mine && !requeued) requeued = registry.retryDelivery(down.id, mine.id);
      await requeued;
      return recordOutcomes(batch);
    };
    try {
      bus.emit('s', 'session.status', { down: true });
      await until('a second attempt', () => received.filter((r) => r.path === '/down').length >= 2);
    } finally {
      outbox.recordOutcomes = recordOutcomes;
    }
    await until('its second outcome written', async () => ((await registry.deliveries(down.id, undefined)).rows[0]?.attempts ?? 0) >= 2);
    const [row] = (await registry.deliveries(down.id, undefined)).rows;
    assert.deepEqual([row?.status, row?.attempts], ['failed', 2], 'sent again after the re-queue, with a fresh budget of one attempt');
    assert.equal(received.filter((r) => r.path === '/down').length, 2);
    await registry.delete(flaky.id);
    await registry.delete(down.id);
  });
});
