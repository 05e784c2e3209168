import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDaemon } from '../helpers/daemon.js';

const HOOKS = pathToFileURL(new URL('../helpers/import-log.js', import.meta.url).pathname).href;

test('a daemon without Baileys sessions or S3 never imports Baileys, the AWS SDK, undici, yaml or qrcode', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-imports-'));
  const log = join(dir, 'imports.txt');
  const daemon = await startDaemon({ env: { NODE_OPTIONS: `--import=${HOOKS}`, IMPORT_LOG: log, GATEWAY_LOG_LEVEL: 'warn' } });
  try {
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'plain', start: true })).status, 201);
    assert.equal((await daemon.request('GET', '/api/openapi.json')).status, 200);
    const imported = new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean));
    assert.ok(imported.has('koa'), 'the import log works');
    for (const lazy of ['@whiskeysockets/baileys', '@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner', 'yaml', 'qrcode', 'undici']) {
      assert.ok(!imported.has(lazy), `${lazy} was imported at start`);
    }
  } finally {
    await daemon.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});
