// `gateway groups`: list, show, create and invite (with --revoke) against a real daemon with sandbox sessions.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliFor } from '../helpers/cli.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'ops', '+15551100001');
});
after(() => daemon.cleanup());

const gateway = cliFor(() => daemon);

test('gateway groups create, list, show, invite and invite --revoke', async () => {
  const created = await gateway('groups', 'create', 'ops', 'Night shift', '+15551100002', '+9995551100');
  assert.equal(created.code, 0, created.stderr);
  const id = /\((\d+@g\.us)\)/.exec(created.stdout)?.[1];
  assert.ok(id, created.stdout);
  assert.match(created.stdout, /with 2 members/);
  assert.match(created.stdout, /not added: 9995551100@s\.whatsapp\.net: NOT_REGISTERED/);

  const list = await gateway('groups', 'list', 'ops');
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /Night shift/);
  const json = JSON.parse((await gateway('--json', 'groups', 'list', 'ops')).stdout);
  assert.deepEqual(json.map((g: { id: string }) => g.id), [id]);

  const show = await gateway('groups', 'show', 'ops', id!);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /\+15551100001.*creator/);
  assert.match(show.stdout, /\+15551100002/);

  const invite = JSON.parse((await gateway('--json', 'groups', 'invite', 'ops', id!)).stdout);
  assert.match(invite.url, /^https:\/\/chat\.whatsapp\.com\//);
  const revoked = await gateway('groups', 'invite', 'ops', id!, '--revoke');
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, /new invite link: https:\/\/chat\.whatsapp\.com\//);
  assert.ok(!revoked.stdout.includes(invite.code));

  const tooLong = await gateway('groups', 'create', 'ops', 'x'.repeat(26));
  assert.notEqual(tooLong.code, 0);
  assert.match(tooLong.stderr, /VALIDATION_FAILED: name must NOT have more than 25 characters/);
});
