// Who owns a path, by uid and by name (from /etc/passwd), for the commands that must write files the daemon's own user
// can open (restore run with sudo) and for the advice that names that user.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

export interface Owner {
  uid: number;
  gid: number;
  /** the user's name, or `uid N` when /etc/passwd does not list it */
  name: string;
}

export function userName(uid: number): string {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === uid && id !== '') return name;
    }
  } catch {
    // no /etc/passwd: the number will do
  }
  return `uid ${uid}`;
}

/** The owner of `path`, or of its nearest existing ancestor (the directory a new one would be created in). */
export function ownerOf(path: string): Owner {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  const { uid, gid } = statSync(at);
  return { uid, gid, name: userName(uid) };
}
