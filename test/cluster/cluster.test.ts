// Issue 22, several daemons on one PostgreSQL: three real daemons (bin/gateway serve, sandbox engine) on one database of
// a real server (Debian's PostgreSQL, started here). New sessions spread over the nodes; a request to any node is
// answered as the owner answers it; the live stream of any node shows every node's events; `kill -9` of a node moves its
// sessions to the others within two lease times, without pairing again and without losing an event (each is delivered
// to a real webhook receiver; duplicates are counted and reported); a session moves on purpose; a node cut off from the
// database stops its sessions before another node starts them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PgDb } from '../../src/store/pg-db.js';
import { startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents } from '../helpers/events.js';
import { startPostgres, tcpRelay, type TestPostgres } from '../helpers/postgres.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const LEASE_SECONDS = 4;
const SESSIONS = 100;
/** a webhook attempt's timeout: a claim lasts this plus 5 s */
const WEBHOOK_TIMEOUT_MS = 2000;

let server: TestPostgres;
let url: string;
let receiver: Receiver;
/** nodes by id: n1, n2, n3 */
const nodes = new Map<string, TestDaemon>();
let db: PgDb;

const phone = (i: number) => `1555${String(7_000_000 + i)}`;
const name = (i: number) => `s${String(i).padStart(3, '0')}`;

async function startNode(id: string, databaseUrl = url, leaseSeconds = LEASE_SECONDS): Promise<TestDaemon> {
  const daemon = await startDaemon({
    env: { GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: databaseUrl, GATEWAY_NODE_ID: id, GATEWAY_LEASE_SECONDS: String(leaseSeconds) },
    config: `webhooks:\n  timeoutMs: ${WEBHOOK_TIMEOUT_MS}\n`,
  });
  nodes.set(id, daemon);
  return daemon;
}

const node = (id: string) => nodes.get(id)!;

/** What the nodes logged as errors, for a failure's message. */
const errorsLogged = () =>
  [...nodes]
    .flatMap(([id, daemon]) => daemon.output().split('\n').filter((line) => line.includes('"level":50')).map((line) => `${id}: ${line.slice(0, 1500)}`))
    .join('\n');

async function clusterStatus(via = 'n1'): Promise<Map<string, string[]>> {
  const answer = await node(via).request('GET', '/api/cluster');
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return new Map((answer.body.data.nodes as Array<{ id: string; sessions: string[] }>).map((n) => [n.id, n.sessions]));
}

async function ownerOf(session: string): Promise<string | undefined> {
  for (const [id, sessions] of await clusterStatus()) if (sessions.includes(session)) return id;
  return undefined;
}

/** Sessions that are CONNECTED, asked of node `via` (each answer comes from the session's owner), 32 at a time (a key's in-flight cap is 64). */
async function connected(sessions: string[], via = 'n1'): Promise<string[]> {
  const up: string[] = [];
  for (let at = 0; at < sessions.length; at += 32) {
    const batch = sessions.slice(at, at + 32);
    const answers = await Promise.all(batch.map((s) => node(via).request('GET', `/api/sessions/${s}`)));
    up.push(...batch.filter((_, i) => answers[i]!.status === 200 && answers[i]!.body.data.status === 'CONNECTED'));
  }
  return up;
}

before(async () => {
  server = await startPostgres();
  url = server.createDatabase('cluster');
  db = new PgDb(url);
  receiver = await startReceiver();
  await Promise.all(['n1', 'n2', 'n3'].map((id) => startNode(id)));
});

after(async () => {
  await Promise.all([...nodes.values()].map((daemon) => daemon.cleanup()));
  await db?.close();
  await receiver?.close();
  server?.stop();
});

describe('three daemons on one PostgreSQL', () => {
  test('new sessions spread over the nodes; any node answers for any session as its owner does', async () => {
    const hook = await node('n1').request('POST', '/api/webhooks', { url: `${receiver.base}/all` });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const ids = ['n1', 'n2', 'n3'];
    for (let i = 0; i < 30; i++) {
      const created = await node(ids[i % 3]!).request('POST', '/api/sessions', { name: name(i), start: true, engine: 'sandbox' });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const paired = await node(ids[(i + 1) % 3]!).request('POST', `/api/sandbox/sessions/${name(i)}/pair`, { phoneNumber: phone(i) });
      assert.equal(paired.status, 200, JSON.stringify(paired.body));
    }
    const spread = await clusterStatus('n3');
    assert.deepEqual([...spread.keys()].sort(), ids);
    assert.deepEqual([...spread.values()].map((s) => s.length), [10, 10, 10], 'ten sessions on each node');
    await waitFor(async () => (await connected(Array.from({ length: 30 }, (_, i) => name(i)))).length === 30, 10_000, 'all 30 CONNECTED');

    // a session of n2, asked of each node: the same answer, said to come from n2 when forwarded
    const session = spread.get('n2')![0]!;
    const answers = await Promise.all(ids.map((id) => node(id).request('GET', `/api/sessions/${session}`)));
    // the time of the session's last frame moves between two reads; the rest is the owner's answer
    const steady = (body: { data: Record<string, unknown> }) => ({ ...body, data: { ...body.data, lastFrameAt: typeof body.data.lastFrameAt } });
    for (const answer of answers) assert.deepEqual(steady(answer.body), steady(answers[1]!.body));
    assert.equal(steady(answers[1]!.body).data.lastFrameAt, 'string', 'a CONNECTED session has a last frame');
    assert.deepEqual(answers.map((a) => a.headers.get('x-gateway-node')), ['n2', null, 'n2']);

    // a send through n3 for a session of n1, seen on n2's live stream
    const stream = await collectEvents(node('n2'));
    try {
      const owned = spread.get('n1')![0]!;
      const sent = await node('n3').request('POST', '/api/messages/send', { session: owned, chatId: `${phone(999)}@s.whatsapp.net`, type: 'text', text: 'through n3' });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      assert.equal(sent.headers.get('x-gateway-node'), 'n1');
      const seen = await stream.next((e) => e.event === 'message.sent' && e.session === owned, 5000, "n1's event on n2's stream");
      assert.equal(seen.payload.messageId, sent.body.data.messageId);
    } finally {
      stream.close();
    }

    // a forged hop is refused, not served where it lands
    const forged = await node('n1').request('GET', `/api/sessions/${session}`, undefined, undefined, { 'X-Gateway-Forwarded-By': 'n2', 'X-Gateway-Forward-Signature': `${Date.now()}.00` });
    assert.equal(forged.status, 401);
  });

  test(`kill -9 of the node running ${SESSIONS} sessions: they run on the others within 2 × the lease (${LEASE_SECONDS} s), never paired again, no event lost`, async (t) => {
    const all = Array.from({ length: SESSIONS + 30 }, (_, i) => name(i));
    for (let i = 30; i < all.length; i++) {
      const created = await node('n1').request('POST', '/api/sessions', { name: name(i), start: true, engine: 'sandbox' });
      assert.equal(created.status, 201, `${JSON.stringify(created.body)}\n${errorsLogged()}`);
      assert.equal((await node('n1').request('POST', `/api/sandbox/sessions/${name(i)}/pair`, { phoneNumber: phone(i) })).status, 200);
    }
    await waitFor(async () => (await connected(all)).length === all.length, 20_000, `all ${all.length} CONNECTED`);
    // every new session onto n2, moved there on purpose: the node that dies runs 100 and more
    const placed = await clusterStatus();
    for (const session of all.slice(30)) {
      if (placed.get('n2')!.includes(session)) continue;
      const moved = await node('n3').request('POST', `/api/cluster/sessions/${session}/move`, { node: 'n2' });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
    }
    let onN2 = 0;
    let up = 0;
    await waitFor(
      async () => {
        onN2 = ((await clusterStatus()).get('n2') ?? []).length;
        up = (await connected(all)).length;
        return onN2 >= SESSIONS + 10 && up === all.length;
      },
      30_000,
      `n2 running ${SESSIONS + 10}`,
    ).catch((err: Error) => assert.fail(`${err.message}: it runs ${onN2}, ${up} of ${all.length} CONNECTED`));
    const victims = (await clusterStatus()).get('n2')!;
    assert.ok(victims.length >= SESSIONS, `n2 runs ${victims.length}`);

    // traffic on every node while n2 dies: sends through n1 and n3 to sessions of all three
    let sending = true;
    const accepted: string[] = [];
    const traffic = (async () => {
      for (let n = 0; sending; n++) {
        const via = n % 2 ? 'n1' : 'n3';
        const answer = await node(via).request('POST', '/api/messages/send', { session: all[n % all.length], chatId: `${phone(900 + (n % 50))}@s.whatsapp.net`, type: 'text', text: `load ${n}` });
        if (answer.status === 200) accepted.push(answer.body.data.messageId);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await new Promise((r) => setTimeout(r, 500));
    const killedAt = Date.now();
    await node('n2').kill();
    const moved = await waitFor(
      async () => {
        const status = await clusterStatus();
        const held = [...(status.get('n1') ?? []), ...(status.get('n3') ?? [])];
        if (!victims.every((s) => held.includes(s))) return undefined;
        return (await connected(victims)).length === victims.length ? Date.now() : undefined;
      },
      4 * LEASE_SECONDS * 1000,
      `n2's ${victims.length} sessions CONNECTED on n1 and n3`,
    );
    sending = false;
    await traffic;
    const failover = moved - killedAt;
    t.diagnostic(`failover of ${victims.length} sessions: ${failover} ms (lease ${LEASE_SECONDS} s); ${accepted.length} sends accepted meanwhile`);
    assert.ok(failover <= 2 * LEASE_SECONDS * 1000, `failover took ${failover} ms`);
    assert.ok(accepted.length > 20, `only ${accepted.length} sends went through`);

    // never paired again: no QR after the kill, credentials where they were
    const qrs = receiver.received.filter((d) => d.json.event === 'session.qr' && Date.parse(d.json.timestamp) > killedAt);
    assert.deepEqual(qrs.map((d) => d.json.session), [], 'a session asked to be paired again');

    // every event the cluster recorded reaches the receiver, n2's pending ones taken over once its claims lapse (events
    // still come meanwhile, acks of the last sends: the check is repeated until the outbox and the receiver agree)
    const missingNow = async () => {
      const received = new Set(receiver.on('/all').map((d) => d.json.id as string));
      // a delivery's id is the envelope's id
      const rows = (await db.prepare('SELECT id, status FROM deliveries').all()) as Array<{ id: string; status: string }>;
      return { rows, missing: rows.filter((row) => row.status !== 'succeeded' || !received.has(row.id)) };
    };
    let last = await missingNow();
    await waitFor(async () => (last = await missingNow()).missing.length === 0, WEBHOOK_TIMEOUT_MS + 5000 + 15_000, 'every delivery received').catch(async () =>
      assert.fail(`events recorded but not delivered: ${JSON.stringify(await Promise.all(last.missing.map((row) => db.prepare('SELECT * FROM deliveries WHERE id = ?').get(row.id))))} at ${Date.now()}\n${errorsLogged()}`),
    );
    const received = receiver.on('/all').map((d) => d.json.id as string);
    t.diagnostic(`${last.rows.length} events recorded, ${new Set(received).size} received, ${received.length - new Set(received).size} duplicates`);
    const sentEvents = new Set(receiver.on('/all').filter((d) => d.json.event === 'message.sent').map((d) => d.json.payload.messageId as string));
    assert.deepEqual(accepted.filter((id) => !sentEvents.has(id)), [], 'an accepted send without its message.sent');
  });

  test('a session moves to another node on purpose, and reconnects there without pairing', async () => {
    const status = await clusterStatus();
    const session = status.get('n1')![0]!;
    const moved = await node('n3').request('POST', `/api/cluster/sessions/${session}/move`, { node: 'n3' });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    await waitFor(async () => (await ownerOf(session)) === 'n3' && (await connected([session])).length === 1, 4 * LEASE_SECONDS * 1000, `${session} on n3`);
    const unknown = await node('n1').request('POST', `/api/cluster/sessions/${session}/move`, { node: 'n9' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'NODE_NOT_FOUND');
  });

  test('a node cut off from the database stops its sessions before another node starts them', async () => {
    const link = await tcpRelay(server, 'cluster');
    // longer leases for n4, whose own margin decides when it stops: room for this machine's load
    const N4_LEASE_SECONDS = 8;
    const n4 = await startNode('n4', link.url, N4_LEASE_SECONDS);
    // it joins right after it starts listening
    await waitFor(async () => (await clusterStatus()).has('n4'), 5000, 'n4 in the cluster');
    const stream = await collectEvents(node('n1'));
    try {
      const status = await clusterStatus();
      const taken = status.get('n1')!.slice(0, 3);
      for (const session of taken) {
        const moved = await node('n1').request('POST', `/api/cluster/sessions/${session}/move`, { node: 'n4' });
        assert.equal(moved.status, 200, JSON.stringify(moved.body));
      }
      await waitFor(async () => (await clusterStatus()).get('n4')?.length === 3 && (await connected(taken)).length === 3, 4 * LEASE_SECONDS * 1000, 'three sessions on n4');
      const cutAt = Date.now();
      link.cut();
      // each one starts again elsewhere: its first CONNECTING there, on n1's stream
      const restarted = await Promise.all(
        taken.map((session) =>
          stream.next((e) => e.session === session && e.event === 'session.status' && e.payload.status === 'CONNECTING' && Date.parse(e.timestamp) > cutAt, 3 * N4_LEASE_SECONDS * 1000, `${session} started elsewhere`),
        ),
      );
      // n4's own log says when it stopped each (its lines may reach the pipe a little later: their time is in them)
      const stoppedAt = new Map<string, number>();
      await waitFor(
        () => {
          for (const line of n4.output().split('\n')) {
            if (!line.includes('lease lost')) continue;
            const entry = JSON.parse(line) as { session: string; time: string };
            stoppedAt.set(entry.session, Date.parse(entry.time));
          }
          return taken.every((session) => stoppedAt.has(session));
        },
        5000,
        "n4's log of the sessions it stopped",
      ).catch(() => undefined);
      for (const [i, session] of taken.entries()) {
        const stopped = stoppedAt.get(session);
        assert.ok(stopped !== undefined, `n4 never stopped ${session}:\n${n4.output().split('\n').map((l) => l.slice(0, 400)).join('\n').slice(-6000)}`);
        const started = Date.parse(restarted[i]!.timestamp);
        assert.ok(stopped < started, `${session} started elsewhere at ${started}, before n4 stopped it at ${stopped} (cut at ${cutAt}):\n${n4.output().split('\n').map((l) => l.slice(0, 260)).join('\n').slice(-5000)}`);
      }
    } finally {
      stream.close();
    }
  });
});
