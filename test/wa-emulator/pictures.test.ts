// Pictures through the emulator (issue 19): real Baileys sets its own and a group's picture (made by jimp, Baileys'
// image library), the emulator stores the JPEG and serves it on the media host, others read the URL, removal is a 404.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Jimp } from 'jimp';
import { closeAll, startWithAliceAndBob, type TestClient, type WaEmulator } from '../support/wa-emulator/index.js';
import { png } from '../engine/samples.js';

/** the iq error's code, which Baileys keeps as the Boom's `data` */
const statusOf = (err: unknown) => (err as { data?: unknown }).data;

describe('wa-emulator pictures', () => {
  let emu: WaEmulator;
  let alice: TestClient;
  let bob: TestClient;

  before(async () => {
    ({ emu, alice, bob } = await startWithAliceAndBob());
  });
  after(() => closeAll(alice, bob, emu));

  it('no picture: 404', async () => {
    await assert.rejects(bob.sock.profilePictureUrl(alice.userJid, 'image'), (err) => statusOf(err) === 404);
  });

  it('the own profile picture: stored as a 640×640 JPEG, served at the URL others read, then removed', async () => {
    await alice.sock.updateProfilePicture(alice.userJid, png(300));
    const stored = emu.control.picture('15550001111');
    assert.ok(stored, 'stored');
    const image = await Jimp.read(stored.bytes);
    assert.equal(image.mime, 'image/jpeg');
    assert.deepEqual([image.width, image.height], [640, 640]);

    const url = await bob.sock.profilePictureUrl(alice.userJid, 'image');
    assert.equal(url, stored.url);
    const served = Buffer.from(await (await fetch(url!)).arrayBuffer());
    assert.ok(served.equals(stored.bytes), 'the media host serves the stored bytes');
    assert.equal(await alice.sock.profilePictureUrl(alice.userJid, 'image'), url, 'the owner reads it too');
    assert.equal(await bob.sock.profilePictureUrl(alice.userLid, 'image'), url, 'by LID as well');

    await alice.sock.removeProfilePicture(alice.userJid);
    assert.equal(emu.control.picture('15550001111'), undefined);
    await assert.rejects(bob.sock.profilePictureUrl(alice.userJid, 'image'), (err) => statusOf(err) === 404);
    assert.equal((await fetch(url!)).status, 404, 'the old URL is gone');
  });

  it("a group's picture: admins set and remove it, members read it, others may not change it", async () => {
    const meta = await alice.sock.groupCreate('Pictures', [bob.userJid]);
    await alice.sock.updateProfilePicture(meta.id, png(64));
    const stored = emu.control.picture(meta.id);
    assert.ok(stored);
    assert.equal(await bob.sock.profilePictureUrl(meta.id, 'image'), stored.url);
    await assert.rejects(bob.sock.updateProfilePicture(meta.id, png(64)), (err) => statusOf(err) === 401);
    await assert.rejects(bob.sock.removeProfilePicture(meta.id), (err) => statusOf(err) === 401);
    await alice.sock.removeProfilePicture(meta.id);
    await assert.rejects(bob.sock.profilePictureUrl(meta.id, 'image'), (err) => statusOf(err) === 404);
    assert.equal(emu.control.picture('15550001111'), undefined, "the group's picture is not the owner's");
  });
});
