// The CLI's manners whatever the command: a usage error is one line and a hint (not the whole help) with the usage exit
// code, and a reader that stops early (`gateway openapi | head`) ends it quietly.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli.js';
import { BIN } from '../helpers/daemon.js';
import { ExitCode } from '../../src/cli/exit-codes.js';

const cwd = mkdtempSync(join(tmpdir(), 'gateway-cli-usage-'));
after(() => rmSync(cwd, { recursive: true, force: true }));
const gateway = (...args: string[]) => runCli(args, { cwd, env: { GATEWAY_URL: 'http://127.0.0.1:9' } });

describe('usage errors', () => {
  for (const [args, error, hint] of [
    [['sessions', 'list', '--bogus'], "error: unknown option '--bogus'", "Run 'gateway sessions list --help' for usage."],
    [['sessions', 'show'], "error: missing required argument 'name'", "Run 'gateway sessions show --help' for usage."],
    [['frobnicate'], "error: unknown command 'frobnicate'", "Run 'gateway --help' for usage."],
    [['sessions', 'frob'], "error: unknown command 'frob'", "Run 'gateway sessions --help' for usage."],
    [['sessions', 'pair', 'a', '--timeout', 'soon'], "error: option '--timeout <seconds>' argument 'soon' is invalid. must be a positive number of seconds.", "Run 'gateway sessions pair --help' for usage."],
  ] as const) {
    test(`gateway ${args.join(' ')}: one line, a hint, exit ${ExitCode.Usage}`, async () => {
      const result = await gateway(...args);
      assert.equal(result.code, ExitCode.Usage, result.stderr);
      assert.equal(result.stdout, '');
      assert.deepEqual(result.stderr.trimEnd().split('\n'), [error, hint]);
    });
  }

  test('an unknown command is shown with its control characters escaped', async () => {
    const result = await gateway('\x1b]0;pwned\x07');
    assert.equal(result.code, ExitCode.Usage);
    assert.ok(!/[\x07\x1b]/.test(result.stderr), JSON.stringify(result.stderr));
  });
});

describe('a closed pipe', () => {
  test('gateway openapi | head: no stack trace, exit 0', async () => {
    const child = spawn(process.execPath, [BIN, 'openapi'], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', GATEWAY_ENV_FILE: '' } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    let chunks = 0;
    child.stdout.on('data', () => {
      chunks += 1;
      if (chunks === 1) child.stdout.destroy();
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => child.once('exit', (c, s) => done([c, s])));
    assert.equal(chunks, 1);
    assert.equal(stderr, '');
    assert.deepEqual([code, signal], [0, null]);
  });
});
