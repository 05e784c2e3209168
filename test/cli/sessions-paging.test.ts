// `gateway sessions list` pages with --limit/--offset (the API's list paging) and says when more sessions follow, on
// stderr, so --json stays parseable; against a real daemon holding more sessions than a page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliFor } from '../helpers/cli.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { pageFooter } from '../../src/cli/commands/sessions.js';
import { ExitCode } from '../../src/cli/exit-codes.js';

let daemon: TestDaemon;
const NAMES = ['p1', 'p2', 'p3', 'p4', 'p5'];
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  for (const name of NAMES) assert.equal((await daemon.request('POST', '/api/sessions', { name })).status, 201);
});
after(() => daemon.cleanup());

const gateway = cliFor(() => daemon);

describe('gateway sessions list paging', () => {
  test('follows the footer page by page through every session', async () => {
    const seen: string[] = [];
    const footers: string[] = [];
    let args = ['sessions', 'list', '--limit', '2'];
    for (let page = 0; page < 5; page++) {
      const listed = await gateway('--json', ...args);
      assert.equal(listed.code, 0, listed.stderr);
      seen.push(...(JSON.parse(listed.stdout) as { name: string }[]).map((s) => s.name));
      if (listed.stderr === '') break;
      footers.push(listed.stderr);
      args = /next: gateway (.*)\n$/.exec(listed.stderr)![1]!.split(' ');
    }
    assert.deepEqual(footers, [
      '2 of 5 shown; next: gateway sessions list --offset 2 --limit 2\n',
      '2 of 5 shown (from #3); next: gateway sessions list --offset 4 --limit 2\n',
    ]);
    assert.deepEqual(seen.sort(), NAMES);
  });

  test('the table says it too; a full list says nothing more', async () => {
    const page = await gateway('sessions', 'list', '--limit', '3');
    assert.equal(page.code, 0, page.stderr);
    assert.equal((page.stdout.match(/ p\d /g) ?? []).length, 3, page.stdout);
    assert.equal(page.stderr, '3 of 5 shown; next: gateway sessions list --offset 3 --limit 3\n');
    const all = await gateway('sessions', 'list');
    assert.equal(all.stderr, '');
    assert.equal((all.stdout.match(/ p\d /g) ?? []).length, 5, all.stdout);
  });

  test('counts over a thousand are written with separators', () => {
    assert.equal(pageFooter(1000, 1006, {}), '1,000 of 1,006 shown; next: gateway sessions list --offset 1000\n');
    assert.equal(pageFooter(6, 1006, { offset: 1000 }), undefined);
  });

  test('bad --limit and --offset are usage errors', async () => {
    for (const args of [['--limit', '0'], ['--limit', '1001'], ['--limit', '1e3'], ['--offset', '-1']]) {
      const bad = await gateway('sessions', 'list', ...args);
      assert.equal(bad.code, ExitCode.Usage, `${args.join(' ')}: ${bad.stderr}`);
      assert.match(bad.stderr, /^error: option '--(limit|offset) <n>' argument '.*' is invalid\. the (page size|offset) must be a whole number from \d+ to [\d,]+\.\nRun 'gateway sessions list --help' for usage\.\n$/);
    }
  });
});
