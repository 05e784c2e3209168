// The daemon's thread never blocks on the store (issue 29): the PostgreSQL bridge, which parked the thread with
// Atomics.wait until a worker answered, is gone, and nothing in src/ waits that way again. A statement's answer is a promise.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/daemon.js';

const SRC = join(ROOT, 'src');

/** What a thread-blocking wait on another thread looks like in source: the wait itself, the synchronous read of a reply, the bridge. */
const BLOCKING = [/\bAtomics\.wait\b/, /\breceiveMessageOnPort\b/, /postgres-bridge/];

const sourceFiles = (): string[] =>
  readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

test('no file under src/ blocks the thread on the store: no Atomics.wait, receiveMessageOnPort or postgres-bridge', () => {
  const files = sourceFiles();
  assert.ok(files.some((file) => file.endsWith(join('store', 'sql.ts'))), `the scan reads src/ (${files.length} files)`);
  const found = files.flatMap((file) => {
    const lines = readFileSync(file, 'utf8').split('\n');
    return lines.flatMap((line, i) => (BLOCKING.some((pattern) => pattern.test(line)) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : []));
  });
  assert.deepEqual(found, []);
});

test('the PostgreSQL bridge and its worker are deleted', () => {
  const left = readdirSync(join(SRC, 'store')).filter((name) => /^postgres-bridge.*\.ts$/.test(name));
  assert.deepEqual(left, []);
});
