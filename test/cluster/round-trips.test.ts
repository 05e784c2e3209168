// Issue 29: the round trips a daemon on PostgreSQL makes to its database on the hot paths, counted by a TCP relay between
// them (a round trip: the daemon sends after the server last answered it; statements pipelined behind one another count
// once). A send's must stay within 4, reads and the commit its answer waits for included; an inbound message's and a
// webhook attempt's are held to what they measure now, so that none creeps back up. Real daemon, real PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { startPostgres, tcpRelay, type TcpRelay, type TestPostgres } from '../helpers/postgres.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

/**
 * The most round trips each may make. `send`: the target. `delivery`: from a send's answer until its webhook POST
 * has arrived and its outcome is recorded, which takes in the sandbox's acks (each a tick), the claims of the
 * dispatcher's rounds (each one round trip for the claim, one for its commit) and the outcome's write: what this
 * measured (9, plus one for noise) when it was written. `inbound`: the message, its event and its delivery, measured likewise (10, plus one).
 */
const LIMITS = { send: 4, delivery: 10, inbound: 11 };
const SAMPLES = 7;

let server: TestPostgres;
let relay: TcpRelay;
let daemon: TestDaemon;
let receiver: Receiver;
const SESSION = 'trips';

before(async () => {
  server = await startPostgres();
  server.createDatabase('trips');
  relay = await tcpRelay(server, 'trips');
  receiver = await startReceiver();
  daemon = await startDaemon({ env: { GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: relay.url, GATEWAY_NODE_ID: 'trips' } });
  assert.equal((await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/hook`, events: ['message.sent', 'message.received'] })).status, 201);
  assert.equal((await daemon.request('POST', '/api/sessions', { name: SESSION, start: true, engine: 'sandbox' })).status, 201);
  assert.equal((await daemon.request('POST', `/api/sandbox/sessions/${SESSION}/pair`, { phoneNumber: '15550002222' })).status, 200);
  await waitFor(async () => (await daemon.request('GET', `/api/sessions/${SESSION}`)).body.data.status === 'CONNECTED', 10_000, 'CONNECTED');
});

after(async () => {
  await daemon?.cleanup();
  await receiver?.stop();
  relay?.cut();
  server?.stop();
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const quiet = () => new Promise((r) => setTimeout(r, 150));

/**
 * The round trips of `act` itself, and of what it leaves to be done until its webhook POST has arrived and its outcome is
 * recorded; the median of SAMPLES runs after one that warms the statements up (prepared on first use). Timers of the
 * daemon's own (lease renewals) can fall into a run: the median leaves them out.
 */
async function measure(act: () => Promise<unknown>): Promise<{ request: number; after: number }> {
  const runs: Array<{ request: number; after: number }> = [];
  for (let i = 0; i <= SAMPLES; i++) {
    await quiet();
    const deliveries = receiver.received.length;
    const start = relay.turns();
    await act();
    const answered = relay.turns();
    await receiver.waitForCount(deliveries + 1);
    await quiet();
    if (i > 0) runs.push({ request: answered - start, after: relay.turns() - answered });
  }
  return { request: median(runs.map((run) => run.request)), after: median(runs.map((run) => run.after)) };
}

test('a send makes at most 4 round trips to PostgreSQL before its answer, and its webhook delivery no more than it did', async (t) => {
  const trips = await measure(async () => {
    const sent = await daemon.request('POST', '/api/messages/send', { session: SESSION, chatId: '+15550009999', type: 'text', text: 'counted' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
  });
  t.diagnostic(`send: ${trips.request} round trips; its webhook attempt: ${trips.after}`);
  assert.ok(trips.request <= LIMITS.send, `a send made ${trips.request} round trips`);
  assert.ok(trips.after <= LIMITS.delivery, `a webhook attempt made ${trips.after} round trips`);
});

test('an inbound message, stored and its webhook attempt made, stays within its round trips', async (t) => {
  const trips = await measure(async () => {
    const inbound = await daemon.request('POST', `/api/sandbox/sessions/${SESSION}/inbound`, { from: '+15550007777', type: 'text', text: 'counted' });
    assert.equal(inbound.status, 200, JSON.stringify(inbound.body));
  });
  t.diagnostic(`inbound: ${trips.request} round trips until the sandbox answered; ${trips.after} after (its webhook attempt)`);
  assert.ok(trips.request + trips.after <= LIMITS.inbound, `an inbound message made ${trips.request} + ${trips.after} round trips`);
});
