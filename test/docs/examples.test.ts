// Runs the shell examples of README.md and docs/API.md against a real sandbox daemon, in document order (later examples
// build on earlier ones), one fresh daemon per file. A ```sh/```bash block with a `curl` or `gateway` command is run
// unless the line before it is `<!-- not-run: reason -->`; `<!-- run: background -->` starts a block that waits for
// the next ones (`sessions pair`, until the phone scans): they run once it printed TEXT (`<!-- run: background until
// "TEXT" -->`), and its exit is checked once the file's other blocks ran.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, MASTER_KEY, ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.js';

export interface ShellExample {
  /** 1-based line of the opening fence */
  line: number;
  script: string;
  notRun?: string;
  /** run in the background; the next blocks start once its output holds this text */
  backgroundUntil?: string;
}

const MARKER = /^<!--\s*(not-run|run):\s*(.*?)\s*-->$/;

/** The fenced sh/bash blocks of a Markdown text that hold a `curl` or `gateway` command. */
export function shellExamples(markdown: string): ShellExample[] {
  const lines = markdown.split('\n');
  const examples: ShellExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s*$/.test(lines[i]!)) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    assert.ok(end > i, `unclosed code block at line ${i + 1}`);
    const script = lines.slice(i + 1, end).join('\n');
    const marker = MARKER.exec(lines[i - 1] ?? '');
    const line = i + 1;
    i = end;
    if (!/(^|[\s;&|(])(curl|gateway)\s/m.test(script.replace(/bin\/gateway/g, 'gateway'))) continue;
    const until = marker?.[1] === 'run' ? /^background until "(.+)"$/.exec(marker[2]!)?.[1] : undefined;
    if (marker?.[1] === 'run') assert.ok(until, `unknown marker "${marker[0]}" (line ${line})`);
    if (marker?.[1] === 'not-run') assert.ok(marker[2], `a not-run marker names why (line ${line})`);
    examples.push({
      line,
      script,
      ...(marker?.[1] === 'not-run' ? { notRun: marker[2] } : {}),
      ...(until ? { backgroundUntil: until } : {}),
    });
  }
  return examples;
}

/** The example as the test daemon needs it: its address instead of the default one, `gateway` as the built binary. */
function adapt(script: string, daemon: TestDaemon): string {
  const prelude = [
    'set -euo pipefail',
    'gateway() { "$NODE" "$GATEWAY_BIN" "$@"; }',
    // an answer over 399 fails the example, as a non-zero exit does
    'curl() { command curl --silent --show-error --fail-with-body --max-time 20 "$@"; }',
  ];
  const body = script.replaceAll('http://127.0.0.1:3000', daemon.url).replace(/\bnode bin\/gateway\b/g, 'gateway');
  return `${prelude.join('\n')}\n${body}\n`;
}

interface Run {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

function run(script: string, daemon: TestDaemon): Run {
  const child = spawn('bash', ['-c', adapt(script, daemon)], {
    cwd: daemon.dataDir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: daemon.dataDir,
      NODE: process.execPath,
      GATEWAY_BIN: BIN,
      GATEWAY_URL: daemon.url,
      GATEWAY_MASTER_KEY: MASTER_KEY,
      KEY: MASTER_KEY,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, output: () => output, exit };
}

async function finish(example: ShellExample, running: Run, file: string, timeoutMs: number): Promise<void> {
  const timer = setTimeout(() => running.child.kill('SIGKILL'), timeoutMs);
  const code = await running.exit.finally(() => clearTimeout(timer));
  assert.equal(code, 0, `${file}:${example.line} failed (exit ${code}):\n${example.script}\n--- output ---\n${running.output()}`);
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((done) => setTimeout(done, 50));
  }
  return true;
}

for (const file of ['README.md', 'docs/API.md']) {
  test(`the shell examples of ${file} run against a sandbox daemon`, async (t) => {
    const examples = shellExamples(readFileSync(join(ROOT, file), 'utf8'));
    const runnable = examples.filter((e) => e.notRun === undefined);
    assert.ok(runnable.length > 0, `${file} has runnable examples`);
    // the README's quick start reads the master key out of gateway.yaml
    const daemon = await startDaemon({ config: `auth:\n  masterKey: ${MASTER_KEY}\n` });
    const background: { example: ShellExample; running: Run }[] = [];
    try {
      for (const example of examples) {
        if (example.notRun !== undefined) continue;
        const running = run(example.script, daemon);
        if (example.backgroundUntil !== undefined) {
          // the next examples need what it started (a session showing its QR)
          const text = example.backgroundUntil;
          const began = await until(() => running.output().includes(text) || running.child.exitCode !== null, 20_000);
          assert.ok(began, `${file}:${example.line} did not print "${text}" within 20 s:\n${running.output()}`);
          background.push({ example, running });
        } else {
          await finish(example, running, file, 30_000);
        }
      }
      for (const { example, running } of background) await finish(example, running, file, 30_000);
    } finally {
      for (const { running } of background) running.child.kill('SIGKILL');
      await daemon.cleanup();
    }
    t.diagnostic(`${file}: ${runnable.length} examples run, ${examples.length - runnable.length} not runnable: ${examples
      .filter((e) => e.notRun !== undefined)
      .map((e) => `line ${e.line} (${e.notRun})`)
      .join('; ')}`);
  });
}

test('shellExamples finds the blocks, their markers, and leaves out blocks without a command', () => {
  const markdown = [
    '```sh',
    'curl -s http://127.0.0.1:3000/api/health',
    '```',
    '<!-- not-run: needs systemd -->',
    '```sh',
    'sudo systemctl enable --now session-gateway',
    'gateway status',
    '```',
    '```sh',
    'echo no command here',
    '```',
    '<!-- run: background until "scan with" -->',
    '```bash',
    'node bin/gateway sessions pair demo',
    '```',
  ].join('\n');
  assert.deepEqual(shellExamples(markdown), [
    { line: 1, script: 'curl -s http://127.0.0.1:3000/api/health' },
    { line: 5, script: 'sudo systemctl enable --now session-gateway\ngateway status', notRun: 'needs systemd' },
    { line: 13, script: 'node bin/gateway sessions pair demo', backgroundUntil: 'scan with' },
  ]);
});
