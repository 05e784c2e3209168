// Work done by root for another user (`sudo gateway restore` into the daemon's data directory) runs with that user's
// effective ids: what it creates is that user's without a chown, and a symlink that user planted in the directory leads
// only where that user could write anyway (root following it would overwrite, and a chown would hand over, any file on
// the system). glibc changes the ids of every thread of the process, libuv's pool included.
import { ownerOf, type Owner } from './file-owner.js';

/** Whom root writes in `dir` as: its owner when that is another user; undefined (as it is) otherwise. */
export function ownerToWriteAs(dir: string): Owner | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const owner = ownerOf(dir);
  return owner.uid === 0 ? undefined : owner;
}

/** Runs `work` as `owner` (effective uid, gid and groups), back to root afterwards; as it is when `owner` is undefined. */
export function asOwnerSync<T>(owner: Owner | undefined, work: () => T): T {
  if (!owner) return work();
  const back = become(owner);
  try {
    return work();
  } finally {
    back();
  }
}

/** asOwnerSync for asynchronous work: the ids stay the owner's until it settles (the CLI does nothing else meanwhile). */
export async function asOwner<T>(owner: Owner | undefined, work: () => Promise<T>): Promise<T> {
  if (!owner) return work();
  const back = become(owner);
  try {
    return await work();
  } finally {
    back();
  }
}

function become(owner: Owner): () => void {
  const groups = process.getgroups!();
  const gid = process.getegid!();
  const back = () => {
    // the uid first: only root may set the groups back
    process.seteuid!(0);
    process.setegid!(gid);
    process.setgroups!(groups);
  };
  try {
    // root's supplementary groups would still open root's group-writable files
    process.setgroups!([owner.gid]);
    process.setegid!(owner.gid);
    process.seteuid!(owner.uid);
  } catch (err) {
    back();
    throw err;
  }
  return back;
}
