// Big media: a 70 MB image sent as base64 in the JSON body, and a 50 MB document sent by URL from a local HTTP server,
// through the real daemon (sandbox engine): wall time of the request and the daemon's peak RSS growth during it, as a
// multiple of the media's size. Baseline, same run: bare Koa routes doing the least any server must (bench/support/bare-media.ts).
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchResult } from './types.js';
import { benchDaemon, pairedSession } from './support/gateway.js';
import { cpuMicros } from './support/cpu.js';
import { startChild } from './support/process.js';
import { result } from './support/report.js';

const MB = 1024 * 1024;
const BASE64_BYTES = 70 * MB;
const URL_BYTES = 50 * MB;
const ROUNDS = Number(process.env.BENCH_MEDIA_ROUNDS ?? 3);
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface Sample {
  ms: number;
  /** the server's CPU time over the request */
  cpuMs: number;
  /** peak RSS during the request minus RSS just before it */
  growth: number;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}

/** Resets the process's peak RSS (VmHWM) where the kernel allows it; otherwise the polled peak is all there is. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

function post(url: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.once('end', () => done({ status: res.statusCode!, text }));
    });
    req.once('error', fail);
    req.end(body);
  });
}

/** One POST, timed, with the server's RSS polled every 5 ms (and its VmHWM read after, when it could be reset). */
async function measure(pid: number, url: string, body: Buffer, headers: Record<string, string> = {}): Promise<Sample> {
  const before = statusKb(pid, 'VmRSS');
  const cpuBefore = cpuMicros(pid)!;
  const hwm = resetPeak(pid);
  let peak = before;
  const poll = setInterval(() => (peak = Math.max(peak, statusKb(pid, 'VmRSS'))), 5);
  const started = performance.now();
  const answer = await post(url, body, headers);
  const ms = performance.now() - started;
  clearInterval(poll);
  if (answer.status !== 200) throw new Error(`media bench: ${url} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  if (hwm) peak = Math.max(peak, statusKb(pid, 'VmHWM'));
  return { ms, cpuMs: (cpuMicros(pid)! - cpuBefore) / 1000, growth: peak - before };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function serveFile(data: Buffer): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': data.length });
    res.end(data);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return server;
}

/** One send through a fresh daemon (memory freed by an earlier send would hide part of this one's growth). */
async function daemonSample(body: Buffer): Promise<Sample> {
  const daemon = await benchDaemon();
  try {
    await pairedSession(daemon, 'a', '+15550900101');
    await pairedSession(daemon, 'b', '+15550900102');
    return await measure(daemon.child.pid!, `${daemon.url}/api/messages/send`, body, { authorization: `Bearer ${daemon.masterKey}` });
  } finally {
    await daemon.cleanup();
  }
}

/** The same body through a fresh bare process. */
async function bareSample(path: string, body: Buffer): Promise<Sample> {
  const bare = await startChild('./bare-media.js');
  try {
    return await measure(bare.process.pid!, `http://127.0.0.1:${bare.port}${path}`, body);
  } finally {
    await bare.stop();
  }
}

export async function run(): Promise<BenchResult[]> {
  const image = Buffer.concat([PNG_SIGNATURE, randomBytes(BASE64_BYTES - PNG_SIGNATURE.length)]);
  const base64Body = Buffer.from(JSON.stringify({ session: 'a', chatId: '+15550900102', type: 'image', base64: image.toString('base64'), caption: 'big' }));
  const document = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(URL_BYTES - 9)]);
  const files = await serveFile(document);
  const fileUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/big.pdf`;
  const urlBody = Buffer.from(JSON.stringify({ session: 'a', chatId: '+15550900102', type: 'document', url: fileUrl, filename: 'big.pdf' }));
  try {
    const samples = { base64: [] as Sample[], bareBase64: [] as Sample[], url: [] as Sample[], bareUrl: [] as Sample[], bareUrlHeld: [] as Sample[] };
    // alternate the daemon and the baseline, so that drift in the machine's speed does not land on one side
    for (let round = 0; round < ROUNDS; round++) {
      samples.bareBase64.push(await bareSample('/base64', base64Body));
      samples.base64.push(await daemonSample(base64Body));
      samples.bareUrl.push(await bareSample('/url', urlBody));
      samples.bareUrlHeld.push(await bareSample('/url-held', urlBody));
      samples.url.push(await daemonSample(urlBody));
    }
    const ms = (list: Sample[]) => median(list.map((s) => s.ms));
    const cpuMs = (list: Sample[]) => median(list.map((s) => s.cpuMs));
    /** the worst round: a peak is what the machine must have room for */
    const growthMb = (list: Sample[]) => Math.max(...list.map((s) => s.growth)) / MB;
    if (process.env.BENCH_VERBOSE) process.stderr.write(`media bench samples: ${JSON.stringify(samples)}\n`);
    const b64 = `${BASE64_BYTES / MB} MB base64 image send`;
    const url = `${URL_BYTES / MB} MB document by URL`;
    return [
      result('media', `${b64}: wall ms, median of ${ROUNDS} (vs bare Koa: parse, decode, write a file; lower is better)`, ms(samples.base64), ms(samples.bareBase64), 'ms'),
      result('media', `${b64}: server CPU ms (vs bare Koa; lower is better)`, cpuMs(samples.base64), cpuMs(samples.bareBase64), 'ms'),
      result('media', `${b64}: daemon peak RSS growth MB, worst round (vs the media's size; lower is better)`, growthMb(samples.base64), BASE64_BYTES / MB, 'MB'),
      result('media', `${b64}, bare Koa: peak RSS growth MB, worst round (vs the media's size)`, growthMb(samples.bareBase64), BASE64_BYTES / MB, 'MB'),
      result('media', `${url}: wall ms, median of ${ROUNDS} (vs bare Koa streaming the download to a file; lower is better)`, ms(samples.url), ms(samples.bareUrl), 'ms'),
      result('media', `${url}: server CPU ms (vs bare Koa; lower is better)`, cpuMs(samples.url), cpuMs(samples.bareUrl), 'ms'),
      result('media', `${url}: daemon peak RSS growth MB, worst round (vs the file's size; lower is better)`, growthMb(samples.url), URL_BYTES / MB, 'MB'),
      result('media', `${url}, bare Koa streaming to a file: peak RSS growth MB, worst round (vs the file's size)`, growthMb(samples.bareUrl), URL_BYTES / MB, 'MB'),
      result('media', `${url}: daemon peak RSS growth MB, worst round (vs bare Koa holding the download in one buffer, as the daemon did before sends streamed to the blob store)`, growthMb(samples.url), growthMb(samples.bareUrlHeld), 'MB'),
    ];
  } finally {
    files.closeAllConnections();
    await new Promise((done) => files.close(done));
  }
}
