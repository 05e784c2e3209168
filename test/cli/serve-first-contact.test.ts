// What someone starting `gateway serve` by hand meets: on a terminal a banner with the API, console and docs URLs and
// the config and data it runs on (the function, since a pseudo-terminal is not at hand); off a terminal (systemd, pipes,
// tests) nothing but JSON log lines; GET / sends a browser to the console; a port already taken is said plainly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { serveBanner } from '../../src/cli/commands/serve.js';
import { BIN, freePort, MASTER_KEY, startDaemon, waitFor } from '../helpers/daemon.js';
import { runCli } from '../helpers/cli.js';
import { checkResponse } from '../helpers/contract.js';

const configWith = (env: Record<string, string>) => loadConfig({ env: { GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_DATA_DIR: '/var/lib/session-gateway', ...env } });

describe('the banner on a terminal', () => {
  test('names the API, console and docs URLs, the config file and the data directory', () => {
    const banner = serveBanner({ config: configWith({ GATEWAY_PORT: '3100' }), configPath: '/etc/session-gateway/gateway.yaml', envFile: '/etc/session-gateway/gateway.env' });
    assert.match(banner, /^gateway ready at http:\/\/127\.0\.0\.1:3100\n/);
    assert.match(banner, /API +http:\/\/127\.0\.0\.1:3100\/api\b/);
    assert.match(banner, /console +http:\/\/127\.0\.0\.1:3100\/console\n/);
    assert.match(banner, /docs +http:\/\/127\.0\.0\.1:3100\/docs\n/);
    assert.match(banner, /config +\/etc\/session-gateway\/gateway\.yaml \(from \/etc\/session-gateway\/gateway\.env\)\n/);
    assert.match(banner, /data +\/var\/lib\/session-gateway\n/);
  });

  test('without a console, on every address, with no config file', () => {
    const banner = serveBanner({ config: configWith({ GATEWAY_CONSOLE_ENABLED: 'false', GATEWAY_HOST: '0.0.0.0' }), configPath: undefined });
    assert.doesNotMatch(banner, /console/);
    assert.match(banner, /^gateway ready at http:\/\/127\.0\.0\.1:3000 \(listening on every address, 0\.0\.0\.0\)/);
    assert.match(banner, /config +none: defaults and GATEWAY_\* variables/);
  });
});

describe('serve off a terminal, and GET /', () => {
  const work = mkdtempSync(join(tmpdir(), 'gateway-first-contact-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  test('stdout is JSON log lines only, and GET / answers 302 to /console', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', GATEWAY_ENV_FILE: '', GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_DATA_DIR: work, GATEWAY_PORT: String(port), GATEWAY_DEFAULT_ENGINE: 'sandbox', GATEWAY_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise((done) => child.once('exit', done));
    try {
      await waitFor(() => fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.ok, () => false), 20_000, 'serve answers');
      const root = await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' });
      assert.equal(root.status, 302);
      assert.equal(root.headers.get('location'), '/console');
      // as the OpenAPI document says
      checkResponse('GET', root.url, root.status, root.headers, undefined, await root.text());
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    const lines = stdout.trim().split('\n');
    assert.ok(lines.length >= 2, stdout);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `not a JSON log line: ${line}`);
    assert.doesNotMatch(stdout, /gateway ready at/);
  });

  test('without the console GET / stays 404 ROUTE_NOT_FOUND', async () => {
    const daemon = await startDaemon({ env: { GATEWAY_CONSOLE_ENABLED: 'false', GATEWAY_LOG_LEVEL: 'warn' } });
    try {
      const root = await fetch(`${daemon.url}/`, { redirect: 'manual' });
      assert.equal(root.status, 404);
      assert.equal(((await root.json()) as { error: { code: string } }).error.code, 'ROUTE_NOT_FOUND');
    } finally {
      await daemon.cleanup();
    }
  });

  test('a port another program holds: exit 1 saying which and how to choose another', async () => {
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
    const port = (holder.address() as AddressInfo).port;
    try {
      const run = await runCli(['serve'], { cwd: work, env: { GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_DATA_DIR: join(work, 'taken'), GATEWAY_PORT: String(port), GATEWAY_DEFAULT_ENGINE: 'sandbox', GATEWAY_LOG_LEVEL: 'warn' } });
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(run.stderr, new RegExp(`error: 127\\.0\\.0\\.1:${port} is taken by another program: choose another port \\(port in gateway\\.yaml, GATEWAY_PORT, or serve --port\\)`));
    } finally {
      holder.close();
    }
  });
});
