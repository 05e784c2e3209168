// Text from others reaches the operator's terminal: a group subject any member sets, a key's name, the daemon's error
// messages. Human output shows their control characters escaped (ESC ] 52 would write the clipboard, U+202E turns text
// around); --json prints them as they are.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forTerminal } from '../../src/cli/output.js';
import { cliFor, runCli } from '../helpers/cli.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';

const CLIPBOARD = '\u001b]52;c;ZXZpbA==\u0007';
const RTL_OVERRIDE = '\u202e';
/** what a terminal would obey: C0/C1 controls and bidirectional-text controls */
const OBEYED = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'ops', '+15551170001');
});
after(() => daemon.cleanup());

const gateway = cliFor(() => daemon);

test('every control and bidi character is written out escaped, line breaks kept', () => {
  assert.equal(forTerminal(`a${CLIPBOARD}b\n`), 'a\\x1b]52;c;ZXZpbA==\\x07b\n');
  assert.equal(forTerminal(`x${RTL_OVERRIDE}gpj.exe\u2066\u200f\u061c\u0085\u009b\t`), 'x\\u202egpj.exe\\u2066\\u200f\\u061c\\x85\\x9b\\x09');
  assert.equal(forTerminal('plain text, ünïcode ✓\n'), 'plain text, ünïcode ✓\n');
});

test('a group subject is escaped in tables and lines, raw in --json', async () => {
  const subject = `Ops${CLIPBOARD}${RTL_OVERRIDE}x`;
  const created = await gateway('groups', 'create', 'ops', subject, '+15551170002');
  assert.equal(created.code, 0, created.stderr);
  assert.doesNotMatch(created.stdout, OBEYED);
  assert.match(created.stdout, /created group Ops\\x1b\]52;c;ZXZpbA==\\x07\\u202ex/);
  const id = /\((\d+@g\.us)\)/.exec(created.stdout)?.[1];

  const list = await gateway('groups', 'list', 'ops');
  assert.equal(list.code, 0, list.stderr);
  assert.doesNotMatch(list.stdout, OBEYED);
  assert.ok(list.stdout.includes('Ops\\x1b]52;c;ZXZpbA==\\x07\\u202ex'), list.stdout);

  const show = await gateway('groups', 'show', 'ops', id!);
  assert.doesNotMatch(show.stdout, OBEYED);

  const json = JSON.parse((await gateway('--json', 'groups', 'list', 'ops')).stdout) as Array<{ name: string }>;
  assert.equal(json[0]!.name, subject);
});

test('a key name is escaped in the key table', async () => {
  const created = await daemon.request('POST', '/api/admin/keys', { name: `ci${CLIPBOARD}`, scopes: ['sessions:read'] });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const list = await gateway('keys', 'list');
  assert.equal(list.code, 0, list.stderr);
  assert.doesNotMatch(list.stdout, OBEYED);
  assert.ok(list.stdout.includes('ci\\x1b]52;c;ZXZpbA==\\x07'), list.stdout);
});

test('an error message from the server is escaped on stderr', async () => {
  // the CLI prints whatever message the server at GATEWAY_URL answers with (a proxy in front of the daemon, or text
  // the daemon quotes from elsewhere)
  const server = createServer((_req, res) => {
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'GROUP_NOT_FOUND', message: `group Ops${CLIPBOARD}${RTL_OVERRIDE} is gone` } }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await runCli(['groups', 'list', 'ops'], { cwd: daemon.dataDir, env: { GATEWAY_URL: url, GATEWAY_MASTER_KEY: daemon.masterKey } });
    assert.notEqual(res.code, 0);
    assert.equal(res.stderr, 'error: GROUP_NOT_FOUND: group Ops\\x1b]52;c;ZXZpbA==\\x07\\u202e is gone\n');
  } finally {
    server.close();
  }
});
