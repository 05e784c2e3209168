// The media benchmark's baseline, run as a child process: bare Koa routes that do the least any server must do with a
// big media send. POST /base64 reads the JSON body, parses it, decodes its `base64` field and writes the bytes to a
// file; POST /url downloads the body's `url` with undici and streams it to a file through a SHA-256 hash; POST /url-held
// downloads it into one buffer of its declared length (what the daemon held until sends streamed to the blob store),
// then writes the file.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Koa from 'koa';
import getRawBody from 'raw-body';
import { request } from 'undici';

const dir = mkdtempSync(join(tmpdir(), 'bare-media-'));
let files = 0;

const app = new Koa();
app.use(async (ctx) => {
  const body = JSON.parse(await getRawBody(ctx.req, { encoding: 'utf8', limit: 200 * 1024 * 1024 })) as { base64?: string; url?: string };
  const file = join(dir, String(++files));
  if (ctx.path === '/base64') {
    const data = Buffer.from(body.base64!, 'base64');
    writeFileSync(file, data);
    ctx.body = { size: data.length };
  } else if (ctx.path === '/url-held') {
    const response = await request(body.url!);
    const data = Buffer.allocUnsafeSlow(Number(response.headers['content-length']));
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) size += chunk.copy(data, size);
    writeFileSync(file, data);
    ctx.body = { size };
  } else {
    const response = await request(body.url!);
    const hash = createHash('sha256');
    let size = 0;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    await pipeline(response.body, hashing, createWriteStream(file));
    ctx.body = { size, sha256: hash.digest('hex') };
  }
  rmSync(file);
});
const server = createServer(app.callback());
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  rmSync(dir, { recursive: true, force: true });
  server.close(() => process.exit(0));
});
