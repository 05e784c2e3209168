// Every dependency with an install script has been reviewed: package.json's allowScripts allows it (true) or denies it
// (false). npm 12 skips unreviewed install scripts, so a new one would otherwise fail an install (or, allowed by
// someone's blanket approval, run unread): a lockfile change that brings one fails here until it is listed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT } from '../helpers/daemon.js';

interface LockEntry {
  version?: string;
  hasInstallScript?: boolean;
  link?: boolean;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };

/** "pkg", "pkg@1.2.3", "@scope/pkg@1 || 2" → the package name. */
const nameOf = (entry: string): string => {
  const at = entry.indexOf('@', entry.startsWith('@') ? 1 : 0);
  return at === -1 ? entry : entry.slice(0, at);
};

/** "node_modules/a/node_modules/@s/b" → "@s/b" */
const packageName = (lockPath: string): string => lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('install scripts', () => {
  const withScripts = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.hasInstallScript && !entry.link)
    .map(([path, entry]) => `${packageName(path)}@${entry.version}`);
  const reviewed = new Map(Object.entries(pkg.allowScripts ?? {}).map(([entry, allowed]) => [nameOf(entry), allowed]));

  test('the lockfile is read: it lists packages with install scripts', () => {
    assert.ok(withScripts.length > 0, 'no package-lock.json entry has hasInstallScript');
  });

  test('every package with an install script is allowed or denied in package.json allowScripts', () => {
    const unreviewed = withScripts.filter((id) => !reviewed.has(nameOf(id)));
    assert.deepEqual(unreviewed, [], 'review these install scripts and list each in allowScripts (npm install-scripts approve|deny)');
  });

  test('allowScripts values are booleans', () => {
    for (const [entry, allowed] of Object.entries(pkg.allowScripts ?? {})) assert.equal(typeof allowed, 'boolean', entry);
  });

  test('better-sqlite3 may build its native module; telemetry may not run', () => {
    assert.equal(reviewed.get('better-sqlite3'), true);
    assert.equal(reviewed.get('@scarf/scarf'), false);
  });
});
