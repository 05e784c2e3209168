// A webhook receiver for benchmarks, run as a child process: answers 204 and reports each delivery's arrival time on request.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let received = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/count') {
    res.end(JSON.stringify({ received }));
    return;
  }
  req.resume();
  req.on('end', () => {
    received += 1;
    res.statusCode = 204;
    res.end();
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
