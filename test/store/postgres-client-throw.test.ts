// Issue 27 item 2, kept in issue 29: postgres.js can throw out of its own socket callbacks when a connection drops at a bad
// moment (seen during `pg_ctl restart`: "Cannot read properties of null (reading 'write')"). With the store in the
// daemon's own thread, that throw would end the daemon: the store takes it for a lost connection instead (the open
// transaction fails at its commit, the next statements run), and any other uncaught error still ends the process.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

let server: TestPostgres;
let dir: string;

before(async () => {
  server = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), 'pg-throw-'));
});

after(() => {
  server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const store = new URL('../../src/store/pg-db.js', import.meta.url).href;

/** Runs `body` in a process of its own with a store open (`db`); its exit code and output. */
function run(body: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = join(dir, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(script, `import { openPgDb } from ${JSON.stringify(store)};\nconst db = await openPgDb(${JSON.stringify(server.url)}, 5000);\n${body}\n`);
  return new Promise((done) => execFile(process.execPath, [script], { timeout: 60_000 }, (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })));
}

/** an error thrown as from inside postgres.js's connection code */
const clientThrow = `const err = new TypeError("Cannot read properties of null (reading 'write')");
err.stack = err.name + ': ' + err.message + '\\n    at Socket.data (file:///app/node_modules/postgres/src/connection.js:1:1)';`;

test("a throw out of postgres.js's callbacks fails the open transaction, and the daemon's store goes on", async () => {
  const result = await run(`
const lost = [];
db.onConnectionLost = (e) => lost.push(e);
db.begin();
db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').stage('inside', '1');
${clientThrow}
setImmediate(() => { throw err; });
await new Promise((r) => setTimeout(r, 50));
const commit = await db.commit().then(() => 'committed', (e) => e.code);
await new Promise((r) => setTimeout(r, 1100));
await db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run('after', '1');
const keys = await db.prepare("SELECT key FROM settings WHERE key IN ('inside', 'after') ORDER BY key").pluck().all();
console.log(JSON.stringify({ commit, lost: lost.length, keys }));
await db.close();
`);
  assert.equal(result.code, 0, result.stderr);
  const outcome = JSON.parse(result.stdout.trim()) as { commit: string; lost: number; keys: string[] };
  assert.notEqual(outcome.commit, 'committed', 'the transaction open when the client threw is not reported committed');
  assert.equal(outcome.lost, 1);
  assert.deepEqual(outcome.keys, ['after'], 'the write of the lost transaction was not kept; the next one was');
});

test('any other uncaught error still ends the process, on stderr, with exit code 1', async () => {
  const result = await run(`setImmediate(() => { throw new Error('a bug of our own'); });\nawait new Promise((r) => setTimeout(r, 2000));\nconsole.log('still running');`);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /a bug of our own/);
  assert.doesNotMatch(result.stdout, /still running/);
});

test('a connection lost while postgres.js looks up its array types (a rejection it leaves unheard) does not end the daemon', async () => {
  // a relay in front of the server that cuts the first connection that sends postgres.js's array-type lookup, once armed
  const script = join(dir, 'array-types.mjs');
  writeFileSync(
    script,
    `import net from 'node:net';
import { openPgDb } from ${JSON.stringify(store)};
const target = new URL(${JSON.stringify(server.url)});
let armed = false;
let cut = 0;
const sockets = new Set();
const relay = net.createServer((client) => {
  const upstream = net.connect(Number(target.port), target.hostname);
  for (const s of [client, upstream]) { sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); }
  client.on('data', (chunk) => {
    if (armed && chunk.includes('pg_catalog.pg_type')) { armed = false; cut += 1; client.resetAndDestroy(); upstream.destroy(); return; }
    upstream.write(chunk);
  });
  upstream.on('data', (chunk) => client.write(chunk));
}).listen(0, '127.0.0.1');
await new Promise((r) => relay.once('listening', r));
const url = new URL(target);
url.port = String(relay.address().port);
const db = await openPgDb(url.href, 5000);
await db.prepare('SELECT 1').run();
// the connection drops; the next statement opens another, which is cut during its array-type lookup
armed = true;
for (const s of sockets) s.destroy();
const during = await db.prepare('SELECT 1').run().then(() => 'answered', (e) => e.code ?? e.message);
let after = 'not answered';
for (let i = 0; i < 40 && after !== 'answered'; i++) {
  await new Promise((r) => setTimeout(r, 250));
  after = await db.prepare('SELECT 1').run().then(() => 'answered', (e) => e.code ?? e.message);
}
console.log(JSON.stringify({ cut, during, after }));
await db.close();
relay.close();
`,
  );
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
    execFile(process.execPath, [script], { timeout: 60_000 }, (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
  );
  assert.equal(result.code, 0, result.stderr);
  const outcome = JSON.parse(result.stdout.trim()) as { cut: number; during: string; after: string };
  assert.equal(outcome.cut, 1, 'the lookup was cut once');
  assert.equal(outcome.after, 'answered', 'statements run again once a connection opens');
});
