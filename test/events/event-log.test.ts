// The event log (issue 30): every event numbered per session without gaps, paged by GET /api/events, carried by webhook
// deliveries, and an event stream that resumes after a cursor with every event it missed once, then the live ones.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { sseData, sseMessages } from '../../src/events/sse.js';

let daemon: TestDaemon;
let receiver: Receiver;
let hmacKey: string;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } });
  receiver = await startReceiver();
  const hook = await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/hook`, events: ['message.received'], session: 'alice' });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  hmacKey = hook.body.data.hmacKey;
  await pairedSession(daemon, 'alice', '+15550710001');
  await pairedSession(daemon, 'bob', '+15550710002');
});
after(async () => {
  await daemon?.cleanup();
  await receiver?.close();
});

const inbound = (session: string, text: string) => daemon.request('POST', `/api/sandbox/sessions/${session}/inbound`, { from: '+15550719999', type: 'text', text });

async function allEvents(session: string, types = ''): Promise<any[]> {
  const events: any[] = [];
  for (let after = 0; ; ) {
    const page = await daemon.request('GET', `/api/events?session=${session}&after=${after}&limit=7${types ? `&types=${types}` : ''}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    events.push(...page.body.data.events);
    after = page.body.data.nextAfter;
    if (!page.body.data.hasMore) return events;
  }
}

/** A reader of the event stream: the events it got, and the `id:` of the last one. */
async function openStream(query: string, lastEventId?: string) {
  const controller = new AbortController();
  const response = await fetch(`${daemon.url}/api/events/stream?${query}`, {
    headers: { Authorization: `Bearer ${daemon.masterKey}`, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const reader = { events: [] as any[], lastId: lastEventId, close: () => controller.abort() };
  void (async () => {
    try {
      for await (const message of sseMessages(response.body as unknown as AsyncIterable<Uint8Array>)) {
        reader.events.push(JSON.parse(message.data));
        reader.lastId = message.id;
      }
    } catch {
      // closed
    }
  })();
  return reader;
}

test("every event of a session is numbered 1, 2, 3 … and GET /api/events pages through them, by type too; webhooks carry the number", async () => {
  for (let i = 0; i < 5; i++) assert.equal((await inbound('alice', `hello ${i}`)).status, 200);
  await inbound('bob', 'for bob');
  const alice = await waitFor(async () => {
    const events = await allEvents('alice');
    return events.filter((e) => e.event === 'message.received').length === 5 ? events : undefined;
  });
  assert.deepEqual(alice.map((e) => e.seq), alice.map((_, i) => i + 1), 'numbered from 1 without a gap');
  assert.ok(alice.every((e) => e.session === 'alice'));
  const received = await allEvents('alice', 'message.received');
  assert.deepEqual(received.map((e) => e.payload.text), [0, 1, 2, 3, 4].map((i) => `hello ${i}`));
  const bob = await allEvents('bob');
  assert.deepEqual(bob.map((e) => e.seq), bob.map((_, i) => i + 1), "bob's events are numbered on their own");

  const deliveries = await receiver.waitForCount(5, '/hook');
  for (const delivery of deliveries) {
    const signature = createHmac('sha256', hmacKey).update(delivery.raw).digest('hex');
    assert.ok(String(delivery.headers['x-webhook-signature']).endsWith(signature), 'signed');
    const logged = alice.find((e) => e.seq === delivery.json.seq);
    assert.equal(logged?.event, 'message.received');
    assert.deepEqual(logged?.payload, delivery.json.payload, 'the delivery carries the number of the same event in the log');
  }

  // a pairing QR holds the new device's keys: the log keeps the event without it
  const qrs = alice.filter((e) => e.event === 'session.qr');
  assert.ok(qrs.length > 0, 'pairing showed a QR');
  assert.ok(qrs.every((e) => e.payload.qr === null && typeof e.payload.expiresAt === 'string'));

  const empty = await daemon.request('GET', `/api/events?session=alice&after=${alice.at(-1).seq}`);
  assert.deepEqual(empty.body.data, { events: [], nextAfter: alice.at(-1).seq, hasMore: false });
  const badType = await daemon.request('GET', '/api/events?session=alice&types=message.nope');
  assert.equal(badType.status, 400);
  const noSession = await daemon.request('GET', '/api/events');
  assert.equal(noSession.status, 400);
  for (const limit of ['0', '1001', '-1', '1.5', 'x']) {
    const res = await daemon.request('GET', `/api/events?session=alice&limit=${limit}`);
    assert.equal(res.status, 400, limit);
    assert.match(res.body.error.message, /limit/);
  }
  const badAfter = await daemon.request('GET', '/api/events?session=alice&after=-1');
  assert.equal(badAfter.status, 400);
});

test('a stream resumed with Last-Event-ID gets what it missed once, then the live events; a cursor of several sessions too', async () => {
  const first = await openStream('session=alice&events=message.received');
  await inbound('alice', 'live 1');
  await waitFor(() => first.events.find((e) => e.payload.text === 'live 1'));
  first.close();
  const seen = first.lastId!;
  assert.match(seen, /^\d+$/, 'a stream of one session: the id is the number');
  await inbound('alice', 'missed 1');
  await inbound('alice', 'missed 2');
  const resumed = await openStream('session=alice&events=message.received', seen);
  await waitFor(() => resumed.events.length >= 2);
  await inbound('alice', 'live 2');
  await waitFor(() => resumed.events.find((e) => e.payload.text === 'live 2'));
  assert.deepEqual(resumed.events.map((e) => e.payload.text), ['missed 1', 'missed 2', 'live 2']);
  resumed.close();

  // every session the key may see: the cursor names each
  const wide = await openStream('events=message.received');
  await inbound('bob', 'bob live');
  await waitFor(() => wide.events.find((e) => e.payload.text === 'bob live'));
  wide.close();
  assert.match(wide.lastId!, /(^|,)bob:\d+/);
  assert.match(wide.lastId!, /(^|,)alice:\d+/, 'a session with earlier events is named from the start');
  await inbound('alice', 'alice away');
  await inbound('bob', 'bob away');
  const back = await openStream('events=message.received', wide.lastId);
  await waitFor(() => back.events.length >= 2);
  assert.deepEqual(back.events.map((e) => `${e.session} ${e.payload.text}`).sort(), ['alice alice away', 'bob bob away']);
  back.close();

  const bad = await fetch(`${daemon.url}/api/events/stream`, { headers: { Authorization: `Bearer ${daemon.masterKey}`, 'Last-Event-ID': '12' } });
  assert.equal(bad.status, 400, 'a bare number needs a session');
  assert.match(((await bad.json()) as any).error.message, /session/);
});

test('a session-limited key resumes only its own sessions, whatever the cursor names', async () => {
  const key = await daemon.request('POST', '/api/admin/keys', { name: 'alice-only', scopes: ['webhooks:manage'], sessions: ['alice'] });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const response = await fetch(`${daemon.url}/api/events/stream?events=message.received`, {
    headers: { Authorization: `Bearer ${key.body.data.key}`, 'Last-Event-ID': 'alice:0,bob:0' },
  });
  assert.equal(response.status, 200);
  const texts: string[] = [];
  const controller = new AbortController();
  const reading = (async () => {
    for await (const data of sseData(response.body as unknown as AsyncIterable<Uint8Array>)) {
      const event = JSON.parse(data);
      texts.push(`${event.session} ${event.payload.text}`);
      if (event.payload.text === 'alice away') return;
    }
  })();
  await Promise.race([reading, new Promise((_, fail) => setTimeout(() => fail(new Error('no replay')), 10_000))]);
  controller.abort();
  await response.body?.cancel().catch(() => {});
  assert.ok(texts.length >= 5);
  assert.ok(texts.every((t) => t.startsWith('alice ')), texts.join('; '));
  const other = await daemon.request('GET', '/api/events?session=bob', undefined, key.body.data.key);
  assert.equal(other.status, 403);
});
