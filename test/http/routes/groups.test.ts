// Groups end to end on the sandbox: create, read, rights, limits, participants, invites, leave, delete, events, group messages.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { pairedSession, startDaemon, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';
import { selfSignedCertificate } from '../../helpers/tls.js';

const A = '+15550200001';
const B = '+15550200002';
const C = '+15550200003';
const jidOf = (phone: string) => `${phone.slice(1)}@s.whatsapp.net`;
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 1)]);
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let daemon: TestDaemon;
let events: EventCollector;
let server: Server;
let picturesBase: string;

before(async () => {
  const tls = selfSignedCertificate();
  server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    if (req.url === '/group.jpg') res.writeHead(200, { 'Content-Type': 'image/jpeg' }).end(JPEG);
    else res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  picturesBase = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', NODE_EXTRA_CA_CERTS: tls.certFile } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', A, { pushName: 'Alice' });
  await pairedSession(daemon, 'b', B, { pushName: 'Bob' });
  await pairedSession(daemon, 'c', C, { pushName: 'Carol' });
});

after(async () => {
  events.close();
  await daemon.cleanup();
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

const api = (method: string, session: string, path: string, body?: unknown) => daemon.request(method, `/api/sessions/${session}${path}`, body);
const g = (id: string) => `/groups/${encodeURIComponent(id)}`;

async function createGroup(name: string, participants: string[], session = 'a') {
  const res = await api('POST', session, '/groups', { session, name, participants });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data as { id: string; name: string; ownerLid: string; createdAt: number; participants: Participant[]; results: any[] };
}

interface Participant {
  phoneNumber?: string;
  lid?: string;
  isAdmin: boolean;
  isSuperAdmin: boolean;
}

function member(group: { participants: Participant[] }, phone: string): Participant | undefined {
  return group.participants.find((p) => p.phoneNumber === phone);
}

describe('groups', () => {
  let groupId: string;

  test('create: 201 with the group, the creator super admin, a result per participant, group.update to every member', async () => {
    const group = await createGroup('Team', [B, '+9995550001', '15550200002']);
    groupId = group.id;
    assert.match(group.id, /^\d+@g\.us$/);
    assert.equal(group.name, 'Team');
    assert.equal(typeof group.createdAt, 'number');
    const session = (await daemon.request('GET', '/api/sessions/a')).body.data;
    assert.equal(group.ownerLid, session.lid);
    assert.deepEqual(member(group, A), { phoneNumber: A, lid: session.lid, isAdmin: true, isSuperAdmin: true });
    assert.equal(member(group, B)?.isAdmin, false);
    assert.equal(group.participants.length, 2);
    assert.deepEqual(group.results, [
      { participant: jidOf(B), status: 'added' },
      { participant: '9995550001@s.whatsapp.net', status: 'failed', error: { code: 'NOT_REGISTERED', message: 'the number is not on the network' } },
    ]);
    for (const s of ['a', 'b']) {
      const created = await events.next((e) => e.session === s && e.event === 'group.update' && e.payload.id === groupId, 5000, `group.update on ${s}`);
      assert.equal(created.payload.action, 'created');
      assert.equal(created.payload.newSubject, 'Team');
      assert.equal(created.payload.by.phoneNumber, A);
    }
  });

  test('list, get and participants, from another member; X-Total-Count on lists', async () => {
    const list = await api('GET', 'b', '/groups');
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('x-total-count'), '1');
    assert.deepEqual(list.body.data.map((x: { id: string }) => x.id), [groupId]);
    const one = await api('GET', 'b', g(groupId));
    assert.equal(one.status, 200);
    assert.equal(one.body.data.description, '');
    assert.deepEqual(Object.keys(one.body.data).sort(), ['createdAt', 'description', 'id', 'name', 'ownerLid', 'participants']);
    const participants = await api('GET', 'b', `${g(groupId)}/participants?limit=1`);
    assert.equal(participants.status, 200);
    assert.equal(participants.headers.get('x-total-count'), '2');
    assert.equal(participants.body.data.length, 1);
    assert.deepEqual(Object.keys(participants.body.data[0]).sort(), ['isAdmin', 'isSuperAdmin', 'lid', 'phoneNumber']);
    assert.equal((await api('GET', 'c', g(groupId))).body.error.code, 'NOT_GROUP_MEMBER');
    const unknown = await api('GET', 'a', g('120363000000000000@g.us'));
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'GROUP_NOT_FOUND');
    const bad = await api('GET', 'a', g('nonsense'));
    assert.equal(bad.status, 400);
  });

  test('limits: name of 25 characters is fine, 26 is refused; 256 participants are fine, 257 refused', async () => {
    const at25 = await createGroup('x'.repeat(25), []);
    assert.equal(at25.name.length, 25);
    const at26 = await api('POST', 'a', '/groups', { session: 'a', name: 'x'.repeat(26) });
    assert.equal(at26.status, 400);
    assert.equal(at26.body.error.code, 'VALIDATION_FAILED');
    assert.equal(at26.body.error.details[0].path, '/name');
    const numbers = (n: number) => Array.from({ length: n }, (_, i) => `+1555031${String(i).padStart(4, '0')}`);
    const big = await createGroup('Big', numbers(256));
    assert.equal(big.participants.length, 257);
    assert.ok(big.results.every((r) => r.status === 'added'));
    const tooMany = await api('POST', 'a', '/groups', { session: 'a', name: 'Bigger', participants: numbers(257) });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.error.details[0].path, '/participants');
    const addTooMany = await api('POST', 'a', `${g(big.id)}/participants`, { session: 'a', participants: numbers(257) });
    assert.equal(addTooMany.status, 400);
    assert.equal(addTooMany.body.error.code, 'VALIDATION_FAILED');
    assert.equal(addTooMany.body.error.details[0].path, '/participants');
    // adding exactly 256 in one request to an existing group is fine: one result each, all added
    const empty = await createGroup('Add256', []);
    const others = Array.from({ length: 256 }, (_, i) => `+1555032${String(i).padStart(4, '0')}`);
    const added = await api('POST', 'a', `${g(empty.id)}/participants`, { session: 'a', participants: others });
    assert.equal(added.status, 200, JSON.stringify(added.body).slice(0, 500));
    assert.equal(added.body.data.results.length, 256);
    assert.ok(added.body.data.results.every((r: { status: string }) => r.status === 'added'));
    assert.deepEqual(new Set(added.body.data.results.map((r: { participant: string }) => r.participant)), new Set(others.map(jidOf)));
    const members = await api('GET', 'a', `${g(empty.id)}/participants?limit=1`);
    assert.equal(members.headers.get('x-total-count'), '257');
  });

  test('the body session must be the path session; a bad participant is a 400', async () => {
    const other = await api('POST', 'a', '/groups', { session: 'b', name: 'Nope' });
    assert.equal(other.status, 400);
    assert.equal(other.body.error.details[0].path, '/session');
    const missing = await api('POST', 'a', '/groups', { name: 'Nope' });
    assert.equal(missing.status, 400);
    const badParticipant = await api('POST', 'a', '/groups', { session: 'a', name: 'Nope', participants: ['hello'] });
    assert.equal(badParticipant.status, 400);
    assert.equal(badParticipant.body.error.details[0].path, '/participants/0');
  });

  test('every group route with `session` in the body refuses another session than the path\'s (400, /session) and changes nothing', async () => {
    const before = (await api('GET', 'a', g(groupId))).body.data;
    const routes: Array<[string, string, Record<string, unknown>]> = [
      ['PUT', `${g(groupId)}/subject`, { value: 'Hijacked' }],
      ['PUT', `${g(groupId)}/description`, { value: 'Hijacked' }],
      ['PUT', `${g(groupId)}/picture`, { base64: JPEG.toString('base64') }],
      ['POST', `${g(groupId)}/participants`, { participants: [C] }],
      ['DELETE', `${g(groupId)}/participants`, { participants: [B] }],
      ['POST', `${g(groupId)}/participants/promote`, { participants: [B] }],
      ['POST', `${g(groupId)}/participants/demote`, { participants: [A] }],
      ['POST', '/groups/join', { code: 'AAAAAAAAAAAAAAAAAAAAAA' }],
    ];
    for (const [method, path, body] of routes) {
      const other = await api(method, 'a', path, { session: 'b', ...body });
      assert.equal(other.status, 400, `${method} ${path}: ${JSON.stringify(other.body)}`);
      assert.equal(other.body.error.code, 'VALIDATION_FAILED');
      assert.equal(other.body.error.details[0].path, '/session', `${method} ${path}`);
      // where SPEC makes it required, leaving it out is refused too
      if (!path.endsWith('/picture') && !path.endsWith('/join')) {
        const missing = await api(method, 'a', path, body);
        assert.equal(missing.status, 400, `${method} ${path} without session`);
        assert.equal(missing.body.error.details[0].path, '/session', `${method} ${path} without session`);
      }
    }
    const after = (await api('GET', 'a', g(groupId))).body.data;
    assert.deepEqual(after, before);
  });

  test('subject and description: admins only (403 NOT_GROUP_ADMIN); group.update with newSubject/newDescription to every member', async () => {
    const denied = await api('PUT', 'b', `${g(groupId)}/subject`, { session: 'b', value: 'Mine' });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'NOT_GROUP_ADMIN');
    assert.equal((await api('PUT', 'b', `${g(groupId)}/description`, { session: 'b', value: 'x' })).body.error.code, 'NOT_GROUP_ADMIN');
    assert.equal((await api('PUT', 'a', `${g(groupId)}/subject`, { session: 'a', value: 'y'.repeat(26) })).status, 400);

    const renamed = await api('PUT', 'a', `${g(groupId)}/subject`, { session: 'a', value: 'Team 2' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.data.success, true);
    const seen = await events.next((e) => e.session === 'b' && e.event === 'group.update' && e.payload.newSubject === 'Team 2');
    assert.equal(seen.payload.id, groupId);
    assert.equal(seen.payload.by.phoneNumber, A);
    await events.next((e) => e.session === 'a' && e.event === 'group.update' && e.payload.newSubject === 'Team 2');

    assert.equal((await api('PUT', 'a', `${g(groupId)}/description`, { session: 'a', value: 'Our team' })).status, 200);
    const described = await events.next((e) => e.session === 'b' && e.event === 'group.update' && e.payload.newDescription === 'Our team');
    assert.equal(described.payload.newSubject, undefined);
    const now = (await api('GET', 'b', g(groupId))).body.data;
    assert.equal(now.name, 'Team 2');
    assert.equal(now.description, 'Our team');
  });

  test('picture: from base64 (JPEG or PNG) or an HTTPS URL, admins only; exactly one source', async () => {
    const ok = await api('PUT', 'a', `${g(groupId)}/picture`, { base64: JPEG.toString('base64') });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    await events.next((e) => e.session === 'b' && e.event === 'group.update' && e.payload.id === groupId && e.payload.pictureChanged === true);
    assert.equal((await api('PUT', 'a', `${g(groupId)}/picture`, { base64: PNG.toString('base64') })).status, 200);
    const byUrl = await api('PUT', 'a', `${g(groupId)}/picture`, { url: `${picturesBase}/group.jpg` });
    assert.equal(byUrl.status, 200, JSON.stringify(byUrl.body));
    const notImage = await api('PUT', 'a', `${g(groupId)}/picture`, { base64: Buffer.from('hello').toString('base64') });
    assert.equal(notImage.status, 400);
    assert.match(notImage.body.error.message, /JPEG or PNG/);
    assert.equal((await api('PUT', 'a', `${g(groupId)}/picture`, {})).status, 400);
    assert.equal((await api('PUT', 'a', `${g(groupId)}/picture`, { url: `${picturesBase}/group.jpg`, base64: JPEG.toString('base64') })).status, 400);
    assert.equal((await api('PUT', 'a', `${g(groupId)}/picture`, { url: `${picturesBase}/missing.jpg` })).status, 400);
    assert.equal((await api('PUT', 'b', `${g(groupId)}/picture`, { base64: JPEG.toString('base64') })).body.error.code, 'NOT_GROUP_ADMIN');
  });

  test('participants: add with per-participant results (admins only); group.participant joined to every member', async () => {
    const denied = await api('POST', 'b', `${g(groupId)}/participants`, { session: 'b', participants: [C] });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'NOT_GROUP_ADMIN');
    const res = await api('POST', 'a', `${g(groupId)}/participants`, { session: 'a', participants: [C, B, '+9995550002'] });
    assert.equal(res.status, 200);
    assert.equal(res.body.data.id, groupId);
    assert.deepEqual(
      res.body.data.results.map((r: any) => [r.participant, r.status, r.error?.code]),
      [
        [jidOf(C), 'added', undefined],
        [jidOf(B), 'failed', 'ALREADY_MEMBER'],
        ['9995550002@s.whatsapp.net', 'failed', 'NOT_REGISTERED'],
      ],
    );
    for (const s of ['a', 'b', 'c']) {
      const joined = await events.next((e) => e.session === s && e.event === 'group.participant' && e.payload.id === groupId && e.payload.joined.includes(jidOf(C)), 5000, `joined on ${s}`);
      assert.deepEqual(joined.payload.left, []);
      assert.deepEqual(joined.payload.promoted, []);
      assert.deepEqual(joined.payload.demoted, []);
      assert.equal(joined.payload.by.phoneNumber, A);
    }
  });

  test('promote/demote: the creator only (403 NOT_GROUP_SUPER_ADMIN, even for admins); group.participant promoted/demoted', async () => {
    const byMember = await api('POST', 'b', `${g(groupId)}/participants/promote`, { session: 'b', participants: [B] });
    assert.equal(byMember.status, 403);
    assert.equal(byMember.body.error.code, 'NOT_GROUP_SUPER_ADMIN');

    const promoted = await api('POST', 'a', `${g(groupId)}/participants/promote`, { session: 'a', participants: [B, '+15550209998'] });
    assert.equal(promoted.status, 200);
    assert.deepEqual(promoted.body.data.results.map((r: any) => r.status), ['promoted', 'failed']);
    assert.equal(promoted.body.data.results[1].error.code, 'NOT_MEMBER');
    const event = await events.next((e) => e.session === 'c' && e.event === 'group.participant' && e.payload.promoted.includes(jidOf(B)));
    assert.deepEqual(event.payload.joined, []);

    // an admin may now rename and add, but still not promote or delete
    assert.equal((await api('PUT', 'b', `${g(groupId)}/subject`, { session: 'b', value: 'Team 3' })).status, 200);
    assert.equal((await api('POST', 'b', `${g(groupId)}/participants/promote`, { session: 'b', participants: [C] })).body.error.code, 'NOT_GROUP_SUPER_ADMIN');
    assert.equal((await api('POST', 'b', `${g(groupId)}/participants/demote`, { session: 'b', participants: [A] })).body.error.code, 'NOT_GROUP_SUPER_ADMIN');
    assert.equal((await api('DELETE', 'b', g(groupId))).body.error.code, 'NOT_GROUP_SUPER_ADMIN');

    const demoted = await api('POST', 'a', `${g(groupId)}/participants/demote`, { session: 'a', participants: [B, A] });
    assert.deepEqual(demoted.body.data.results.map((r: any) => [r.status, r.error?.code]), [['demoted', undefined], ['failed', 'NOT_ALLOWED']]);
    await events.next((e) => e.session === 'b' && e.event === 'group.participant' && e.payload.demoted.includes(jidOf(B)));
    const b = member((await api('GET', 'a', g(groupId))).body.data, B);
    assert.equal(b?.isAdmin, false);
  });

  test('remove: admins only; group.participant left reaches the removed member too', async () => {
    assert.equal((await api('DELETE', 'b', `${g(groupId)}/participants`, { session: 'b', participants: [C] })).body.error.code, 'NOT_GROUP_ADMIN');
    const removed = await api('DELETE', 'a', `${g(groupId)}/participants`, { session: 'a', participants: [C, A] });
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body.data.results.map((r: any) => [r.status, r.error?.code]), [['removed', undefined], ['failed', 'NOT_ALLOWED']]);
    for (const s of ['a', 'b', 'c']) {
      await events.next((e) => e.session === s && e.event === 'group.participant' && e.payload.left.includes(jidOf(C)), 5000, `left on ${s}`);
    }
    assert.equal((await api('GET', 'c', g(groupId))).body.error.code, 'NOT_GROUP_MEMBER');
  });

  test('invite: admins get the code; preview does not join; joining by code yields group.update joined and group.participant', async () => {
    assert.equal((await api('GET', 'b', `${g(groupId)}/invite`)).body.error.code, 'NOT_GROUP_ADMIN');
    const invite = await api('GET', 'a', `${g(groupId)}/invite`);
    assert.equal(invite.status, 200);
    const { code, url } = invite.body.data;
    assert.match(code, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(url, `https://chat.whatsapp.com/${code}`);

    const preview = await api('GET', 'c', `/groups/join?inviteCode=${encodeURIComponent(code)}`);
    assert.equal(preview.status, 200);
    const a = (await daemon.request('GET', '/api/sessions/a')).body.data;
    assert.equal(preview.body.data.id, groupId);
    assert.equal(preview.body.data.subject, 'Team 3');
    assert.equal(preview.body.data.size, 2);
    assert.equal(preview.body.data.creatorLid, a.lid);
    assert.equal(typeof preview.body.data.createdAt, 'number');
    assert.equal(preview.body.data.participants.length, 2);
    assert.equal((await api('GET', 'c', g(groupId))).body.error.code, 'NOT_GROUP_MEMBER');
    assert.equal((await api('GET', 'a', g(groupId))).body.data.participants.length, 2);

    const withUrl = await api('POST', 'c', '/groups/join', { code: url });
    assert.equal(withUrl.status, 400);
    assert.match(withUrl.body.error.message, /only the invite code/);
    assert.equal((await api('GET', 'c', `/groups/join?inviteCode=${encodeURIComponent(url)}`)).status, 400);
    assert.equal((await api('GET', 'c', '/groups/join')).status, 400);

    const joined = await api('POST', 'c', '/groups/join', { code });
    assert.equal(joined.status, 200);
    assert.equal(joined.body.data.id, groupId);
    assert.ok(member(joined.body.data, C));
    const update = await events.next((e) => e.session === 'c' && e.event === 'group.update' && e.payload.action === 'joined');
    assert.equal(update.payload.id, groupId);
    const participant = await events.next((e) => e.session === 'a' && e.event === 'group.participant' && e.payload.action === 'join');
    assert.deepEqual(participant.payload.joined, [jidOf(C)]);
    assert.equal(participant.payload.by.phoneNumber, C);
  });

  test('revoking the invite makes the old code fail and returns a new one that works', async () => {
    const old = (await api('GET', 'a', `${g(groupId)}/invite`)).body.data.code;
    assert.equal((await api('DELETE', 'b', `${g(groupId)}/invite`)).body.error.code, 'NOT_GROUP_ADMIN');
    const revoked = await api('DELETE', 'a', `${g(groupId)}/invite`);
    assert.equal(revoked.status, 200);
    const fresh = revoked.body.data.code;
    assert.notEqual(fresh, old);
    assert.equal((await api('GET', 'a', `${g(groupId)}/invite`)).body.data.code, fresh);
    await events.next((e) => e.session === 'b' && e.event === 'group.update' && e.payload.id === groupId && e.payload.inviteCodeChanged === true);

    const stalePreview = await api('GET', 'c', `/groups/join?inviteCode=${old}`);
    assert.equal(stalePreview.status, 404);
    assert.equal(stalePreview.body.error.code, 'INVITE_NOT_FOUND');
    // a virtual contact tries the old code, then the new one
    const staleJoin = await daemon.request('POST', '/api/sandbox/sessions/a/groups', { from: '+15550209999', action: 'join', code: old });
    assert.equal(staleJoin.status, 404);
    assert.equal(staleJoin.body.error.code, 'INVITE_NOT_FOUND');
    const contactJoin = await daemon.request('POST', '/api/sandbox/sessions/a/groups', { from: '+15550209999', action: 'join', code: fresh });
    assert.equal(contactJoin.status, 200);
    assert.equal(contactJoin.body.data.groupId, groupId);
    const seen = await events.next((e) => e.session === 'b' && e.event === 'group.participant' && e.payload.joined.includes('15550209999@s.whatsapp.net'));
    assert.equal(seen.payload.by.phoneNumber, '+15550209999');
  });

  test('a virtual contact acts with its own rights: renaming as a plain member is refused', async () => {
    const denied = await daemon.request('POST', '/api/sandbox/sessions/a/groups', { from: '+15550209999', action: 'subject', groupId, value: 'Hijack' });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'NOT_GROUP_ADMIN');
    const left = await daemon.request('POST', '/api/sandbox/sessions/a/groups', { from: '+15550209999', action: 'leave', groupId });
    assert.equal(left.status, 200);
    await events.next((e) => e.session === 'a' && e.event === 'group.participant' && e.payload.left.includes('15550209999@s.whatsapp.net'));
  });

  test('a text from A to the group arrives at B with isGroup true and from = A', async () => {
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: groupId, type: 'text', text: 'hello group' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const id = sent.body.data.messageId;
    for (const s of ['b', 'c']) {
      const received = await events.next((e) => e.session === s && e.event === 'message.received' && e.payload.messageId === id, 5000, `${s} receives`);
      assert.equal(received.payload.isGroup, true);
      assert.equal(received.payload.chatId, groupId);
      assert.equal(received.payload.from.phoneNumber, A);
      assert.equal(received.payload.text, 'hello group');
    }
  });

  test('leave: group.participant left; the group is gone from the leaver\'s list', async () => {
    const left = await api('POST', 'c', `${g(groupId)}/leave`);
    assert.equal(left.status, 200);
    const event = await events.next((e) => e.session === 'a' && e.event === 'group.participant' && e.payload.action === 'leave' && e.payload.left.includes(jidOf(C)));
    assert.equal(event.payload.by.phoneNumber, C);
    assert.ok(!(await api('GET', 'c', '/groups')).body.data.some((x: { id: string }) => x.id === groupId));
    assert.equal((await api('POST', 'c', `${g(groupId)}/leave`)).body.error.code, 'NOT_GROUP_MEMBER');
  });

  test('delete: the creator only; group.update deleted to members; then 404', async () => {
    const deleted = await api('DELETE', 'a', g(groupId));
    assert.equal(deleted.status, 200);
    const event = await events.next((e) => e.session === 'b' && e.event === 'group.update' && e.payload.action === 'deleted');
    assert.equal(event.payload.id, groupId);
    assert.equal((await api('GET', 'a', g(groupId))).status, 404);
    assert.equal((await api('GET', 'b', g(groupId))).body.error.code, 'GROUP_NOT_FOUND');
  });

  test('scopes: a sessions:read key lists groups but cannot create one; a stopped session gets 409', async () => {
    const key = await daemon.request('POST', '/api/account/keys', { name: 'reader', scopes: ['sessions:read'] });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const token = key.body.data.key;
    assert.equal((await daemon.request('GET', '/api/sessions/a/groups', undefined, token)).status, 200);
    const denied = await daemon.request('POST', '/api/sessions/a/groups', { session: 'a', name: 'x' }, token);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'FORBIDDEN_SCOPE');

    await daemon.request('POST', '/api/sessions', { name: 'idle', engine: 'sandbox' });
    const idle = await api('GET', 'idle', '/groups');
    assert.equal(idle.status, 409);
    assert.equal(idle.body.error.code, 'SESSION_NOT_CONNECTED');
  });
});
