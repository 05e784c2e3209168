// The suite's second pass: the test files once more with every daemon they start on PostgreSQL (store.kind: postgres),
// one database per data dir on a server this script starts (Debian's postgresql, in a temporary directory) and stops
// after. `npm test` runs it after the SQLite pass, with the same files; the ones below are left out, each for its reason,
// and the list is printed. Exits with node --test's code.
import { spawn } from 'node:child_process';
import { startPostgres } from '../helpers/postgres.js';

/** Files that test the SQLite store itself, or start their own PostgreSQL: the first pass runs them, once is all they mean. */
const NOT_TWICE: Array<[pattern: RegExp, why: string]> = [
  [/\/test\/store\/(?!postgres-|delivery-claims)/, 'the SQLite repositories and schema, on a SQLite file they open themselves'],
  [/\/test\/store\/(postgres-|delivery-claims)|\/test\/cluster\//, 'start their own PostgreSQL (the first pass runs them)'],
  [/\/test\/cli\/(backup-restore|doctor|rotate-master-key)\.test/, "SQLite file commands: backup, restore, doctor and rotate-master-key work on gateway.db (PostgreSQL's are pg_dump and its own tools, docs/SCALING.md)"],
  [/\/test\/daemon\/(backup-schedule|secrets-at-rest)\.test/, "the daemon's backups of gateway.db, and the bytes of gateway.db and its WAL"],
];

const all = process.argv.slice(2);
const files = all.filter((file) => !NOT_TWICE.some(([pattern]) => pattern.test(file)));
for (const [pattern, why] of NOT_TWICE) {
  const left = all.filter((file) => pattern.test(file));
  if (left.length) console.log(`# PostgreSQL pass: not run again (${why}): ${left.map((file) => file.replace(/^.*\/test\//, '')).join(', ')}`);
}
console.log(`# PostgreSQL pass: ${files.length} of ${all.length} test files`);
const server = await startPostgres();
const code = await new Promise<number>((done) => {
  const child = spawn(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=180000', ...files], {
    stdio: 'inherit',
    env: { ...process.env, GATEWAY_TEST_PG_URL: server.url },
  });
  child.on('exit', (status, signal) => done(status ?? (signal ? 1 : 0)));
});
server.stop();
process.exit(code);
