// A client generated from the served document (openapi-typescript + openapi-fetch) type-checks and drives a real daemon.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.js';

const run = promisify(execFile);
// openapi-typescript needs the TypeScript 5 compiler API, so it lives in its own package with its own typescript
const TYPEGEN = join(ROOT, 'node_modules', 'openapi-typegen', 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
// inside the project so that `openapi-fetch` resolves from its node_modules; .scratch/ is ignored by git
const DIR = join(ROOT, '.scratch', `openapi-client-${process.pid}`);

const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const client = createClient<paths>({ baseUrl: process.env.GATEWAY_URL!, headers: { Authorization: \`Bearer \${process.env.GATEWAY_KEY}\` } });

async function main(): Promise<void> {
  const created = await client.POST('/api/sessions', { body: { name: 'typed', engine: 'sandbox', start: true } });
  if (!created.data) throw new Error(\`create: \${JSON.stringify(created.error)}\`);
  const status: 'CONNECTING' | 'CONNECTED' | 'DISCONNECTED' = created.data.data.status;

  const paired = await client.POST('/api/sandbox/sessions/{session}/pair', {
    params: { path: { session: 'typed' } },
    body: { phoneNumber: '+15550007001' },
  });
  if (!paired.data) throw new Error(\`pair: \${JSON.stringify(paired.error)}\`);
  const done: true = paired.data.data.success;

  for (let i = 0; ; i++) {
    const session = await client.GET('/api/sessions/{session}', { params: { path: { session: 'typed' } } });
    if (session.data?.data.status === 'CONNECTED') break;
    if (i > 200) throw new Error('never CONNECTED');
    await new Promise((r) => setTimeout(r, 25));
  }

  const sent = await client.POST('/api/messages/send', { body: { session: 'typed', chatId: '+15550007002', type: 'text', text: 'hello from a typed client' } });
  if (!sent.data) throw new Error(\`send: \${JSON.stringify(sent.error)}\`);
  // 200 (sent) or 202 (accepted or queued, with Prefer: respond-async; a queued one names its messageId too): the type says so
  if ('commandId' in sent.data.data) throw new Error('expected the 200 answer');
  const messageId: string = sent.data.data.messageId;

  const missing = await client.GET('/api/sessions/{session}', { params: { path: { session: 'nobody' } } });
  const code: string | undefined = missing.error?.error.code;

  // @ts-expect-error: not a route of the document
  await client.GET('/api/no-such-route');

  console.log(JSON.stringify({ status, done, messageId, code }));
}

await main();
`;

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon();
  mkdirSync(DIR, { recursive: true });
});
after(async () => {
  await daemon?.cleanup();
  rmSync(DIR, { recursive: true, force: true });
});

test('a client generated from GET /api/openapi.json compiles and creates, pairs and sends through a real daemon', async () => {
  const served = await daemon.request('GET', '/api/openapi.json', undefined, null);
  assert.equal(served.status, 200);
  writeFileSync(join(DIR, 'openapi.json'), JSON.stringify(served.body));
  await run(process.execPath, [TYPEGEN, join(DIR, 'openapi.json'), '--output', join(DIR, 'api.d.ts')], { cwd: DIR });

  writeFileSync(join(DIR, 'client.ts'), CLIENT);
  writeFileSync(
    join(DIR, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: ['node'], strict: true, skipLibCheck: true, outDir: 'out' },
      files: ['client.ts', 'api.d.ts'],
    }),
  );
  writeFileSync(join(DIR, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const check = await run(process.execPath, [TSC, '--noEmit', '-p', DIR], { cwd: DIR }).catch((err: { stdout: string; stderr: string }) => err);
  assert.equal((check as { stdout: string }).stdout, '', `tsc --noEmit:\n${(check as { stdout: string }).stdout}${(check as { stderr: string }).stderr}`);

  await run(process.execPath, [TSC, '-p', DIR], { cwd: DIR });
  const { stdout } = await run(process.execPath, [join(DIR, 'out', 'client.js')], {
    cwd: DIR,
    env: { PATH: process.env.PATH ?? '', GATEWAY_URL: daemon.url, GATEWAY_KEY: daemon.masterKey },
  });
  const result = JSON.parse(stdout.trim()) as { status: string; done: boolean; messageId: string; code: string };
  assert.equal(result.done, true);
  assert.ok(['CONNECTING', 'DISCONNECTED', 'CONNECTED'].includes(result.status));
  assert.match(result.messageId, /\S/);
  assert.equal(result.code, 'SESSION_NOT_FOUND');
  const messages = await daemon.request('GET', '/api/sessions/typed');
  assert.equal(messages.body.data.status, 'CONNECTED');
});
