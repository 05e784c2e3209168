// Issue 27 item 2, a cluster node stays up when PostgreSQL restarts, stops or stalls: three real daemons on one real
// PostgreSQL, with sends and inbound messages going on through every node, while the server is restarted ten times
// (`pg_ctl restart -m fast`), stopped for longer than a lease, and one session's row is locked for 10 s by another
// client. No node exits; every send answered 2xx is in the store afterwards; every session is CONNECTED again within
// two leases of the database being back (none is paired again: CONNECTED is from the stored credentials).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

const LEASE_SECONDS = 4;
const LEASE_MS = LEASE_SECONDS * 1000;
const SESSIONS = 9;
const IDS = ['n1', 'n2', 'n3'];
const OUTPUTS = join('test-results', 'database-outage');

let server: TestPostgres;
let url: string;
const nodes = new Map<string, TestDaemon>();
const node = (id: string) => nodes.get(id)!;
const phone = (i: number) => `1555${String(8_000_000 + i)}`;
const names = Array.from({ length: SESSIONS }, (_, i) => `o${i}`);

before(async () => {
  server = await startPostgres();
  url = server.createDatabase('outage');
  // one after the other: the first creates the schema, on a loaded machine the others' first reads would wait for it
  for (const id of IDS) nodes.set(id, await startDaemon({ env: { GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: url, GATEWAY_NODE_ID: id, GATEWAY_LEASE_SECONDS: String(LEASE_SECONDS) } }));
});

after(async () => {
  await Promise.all([...nodes.values()].map((daemon) => daemon.cleanup()));
  server?.stop();
});

/** The nodes that exited, with the end of what each printed. */
const exits = () =>
  [...nodes]
    .filter(([, daemon]) => daemon.child.exitCode !== null || daemon.child.signalCode !== null)
    .map(([id, daemon]) => `${id} exited ${daemon.child.exitCode ?? daemon.child.signalCode}:\n${daemon.output().slice(-3000)}`);

/** what a node logged of the requests it failed (the last three) */
const failedRequests = (id: string) => node(id).output().split('\n').filter((line) => line.includes('"request failed"')).slice(-3).map((line) => line.slice(0, 1500)).join('\n');

/** Sessions CONNECTED, each asked of its own node in turn (any node answers for any session). */
async function connected(): Promise<string[]> {
  const answers = await Promise.all(names.map((s, i) => node(IDS[i % 3]!).request('GET', `/api/sessions/${s}`).catch(() => undefined)));
  return names.filter((_, i) => answers[i]?.status === 200 && answers[i]!.body.data.status === 'CONNECTED');
}

/** Every node's whole output, in test-results/database-outage/, for a failure to be read after. */
function keepOutputs(): void {
  mkdirSync(OUTPUTS, { recursive: true });
  for (const [id, daemon] of nodes) writeFileSync(join(OUTPUTS, `${id}.log`), daemon.output());
}

/** For sessions not CONNECTED: what each node answers for them, and the last lines each node logged about them. */
async function whyNot(missing: string[]): Promise<string> {
  const parts: string[] = [];
  for (const session of missing) {
    for (const id of IDS) {
      const answer = await node(id).request('GET', `/api/sessions/${session}`).catch((err: unknown) => ({ status: 0, body: String(err) }));
      const logged = node(id).output().split('\n').filter((line) => line.includes(`"${session}"`)).slice(-6).map((line) => line.slice(0, 600));
      parts.push(`${session} via ${id}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 400)}\n${logged.join('\n')}`);
    }
  }
  return parts.join('\n');
}

async function allConnectedWithin(ms: number, what: string): Promise<number> {
  const from = Date.now();
  let up: string[] = [];
  await waitFor(async () => exits().length > 0 || (up = await connected()).length === SESSIONS, ms, what).catch(async () => {
    const missing = names.filter((s) => !up.includes(s));
    keepOutputs();
    assert.fail(`${what}: ${up.length} of ${SESSIONS} CONNECTED after ${ms} ms (${missing.join(', ')})\n${exits().join('\n')}\n${await whyNot(missing)}`);
  });
  if (exits().length > 0) keepOutputs();
  assert.deepEqual(exits(), [], `a node exited during: ${what}`);
  return Date.now() - from;
}

test('three nodes under sends and inbound traffic: PostgreSQL restarted ten times, stopped past a lease, a row locked for 10 s', async (t) => {
  // a loaded machine can make the database slower than these short leases' answer time: a 503 says to try again
  const retried = async (via: string, path: string, body: unknown) => {
    for (let attempt = 1; ; attempt++) {
      const answer = await node(via).request('POST', path, body);
      if (answer.status !== 503 || attempt === 5) return answer;
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  for (const [i, session] of names.entries()) {
    const created = await retried(IDS[i % 3]!, '/api/sessions', { name: session, start: true, engine: 'sandbox' });
    // 409: a first attempt answered 503 was committed after all (its commit outlived the answer's wait)
    assert.ok(created.status === 201 || created.status === 409, JSON.stringify(created.body));
    const paired = await retried(IDS[i % 3]!, `/api/sandbox/sessions/${session}/pair`, { phoneNumber: phone(i) });
    assert.equal(paired.status, 200, JSON.stringify(paired.body));
  }
  await allConnectedWithin(20_000, 'every session CONNECTED at first');

  // traffic through every node while the database goes away and comes back: sends, and messages from contacts
  let going = true;
  const accepted: string[] = [];
  const answers = new Map<number, number>();
  const failures = new Map<string, number>();
  const traffic = (async () => {
    for (let n = 0; going; n++) {
      const via = node(IDS[n % 3]!);
      const session = names[n % SESSIONS]!;
      const answer =
        n % 3 === 2
          ? await via.request('POST', `/api/sandbox/sessions/${session}/inbound`, { from: phone(500 + (n % 7)), type: 'text', text: `inbound ${n}` }).catch(() => undefined)
          : await via.request('POST', '/api/messages/send', { session, chatId: `${phone(600 + (n % 7))}@s.whatsapp.net`, type: 'text', text: `send ${n}` }).catch(() => undefined);
      const status = answer?.status ?? 0;
      if (status >= 400) failures.set(answer!.body.error.code, (failures.get(answer!.body.error.code) ?? 0) + 1);
      answers.set(status, (answers.get(status) ?? 0) + 1);
      if (n % 3 !== 2 && status === 200) accepted.push(answer!.body.data.messageId as string);
      await new Promise((r) => setTimeout(r, 15));
    }
  })();

  try {
    for (let i = 0; i < 10; i++) {
      await server.restart();
      await new Promise((r) => setTimeout(r, 300));
    }
    t.diagnostic(`after ten restarts: every session CONNECTED in ${await allConnectedWithin(2 * LEASE_MS, 'every session CONNECTED again after ten restarts')} ms`);

    await server.halt();
    await new Promise((r) => setTimeout(r, LEASE_MS + 1000));
    assert.deepEqual(exits(), [], 'a node exited while the database was down');
    const down = await node('n1').request('GET', `/api/sessions/${names[0]}`).catch(() => undefined);
    assert.equal(down?.status, 503, `${JSON.stringify(down?.body)}\n${failedRequests('n1')}`);
    assert.ok(['STORE_UNAVAILABLE', 'NODE_UNREACHABLE'].includes(down!.body.error.code), JSON.stringify(down!.body));
    assert.ok(down!.headers.get('retry-after'), 'a 503 says when to retry');
    await server.resume();
    t.diagnostic(`after a stop of ${LEASE_MS + 1000} ms: every session CONNECTED in ${await allConnectedWithin(2 * LEASE_MS, 'every session CONNECTED again after the database was stopped past a lease')} ms`);

    // one session's row held by another client's open transaction for 10 s
    const locker = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await locker.begin(async (tx) => {
        await tx`SELECT name FROM sessions WHERE name = ${names[4]!} FOR UPDATE`;
        await new Promise((r) => setTimeout(r, 10_000));
      });
    } finally {
      await locker.end({ timeout: 5 });
    }
    t.diagnostic(`after a row lock of 10 s: every session CONNECTED in ${await allConnectedWithin(2 * LEASE_MS, 'every session CONNECTED after the row lock')} ms`);
  } finally {
    going = false;
    await traffic;
  }
  t.diagnostic(`answers by status: ${JSON.stringify(Object.fromEntries(answers))}; errors: ${JSON.stringify(Object.fromEntries(failures))}`);
  assert.deepEqual(exits(), []);
  // a node without its database says so (503 STORE_UNAVAILABLE, or NODE_UNREACHABLE for a forward), never a 500
  const internal = [...nodes].flatMap(([id, daemon]) => daemon.output().split('\n').filter((line) => line.includes('"request failed"')).map((line) => `${id}: ${line.slice(0, 1500)}`));
  assert.deepEqual(internal, [], 'a request failed with 500');
  assert.ok(accepted.length > 20, `only ${accepted.length} sends answered 2xx`);

  // every send answered 2xx is in the store
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const stored = new Set((await sql<Array<{ id: string }>>`SELECT id FROM messages WHERE from_me = 1`).map((row) => row.id));
    assert.deepEqual(accepted.filter((id) => !stored.has(id)), [], 'a send answered 2xx is not in the store');
  } finally {
    await sql.end({ timeout: 5 });
  }
});
