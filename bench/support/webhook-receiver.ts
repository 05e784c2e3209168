// A webhook receiver for the webhooks benchmark, run as a child process: answers 200, counts deliveries, and for requests
// marked `X-Bench: latency` records arrival minus the payload's send time `t` (epoch ms, same machine clock).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const now = () => performance.timeOrigin + performance.now();
let received = 0;
let latencies: number[] = [];

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    if (req.url === '/stats') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ received, latencies }));
      latencies = [];
    } else {
      received = 0;
      latencies = [];
      res.end('{}');
    }
    return;
  }
  const timed = req.headers['x-bench'] === 'latency';
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => {
    if (timed) chunks.push(chunk);
  });
  req.on('end', () => {
    received += 1;
    if (timed) {
      const arrived = now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payload: { t: number } };
      latencies.push(arrived - body.payload.t);
    }
    res.statusCode = 200;
    res.end();
  });
});
server.keepAliveTimeout = 30_000;
server.headersTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
