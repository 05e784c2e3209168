// By hand (`npm run build && node dist/bench/sse-slow-reader.js`): what one event stream that stops reading holds before
// the daemon drops it. A raw client subscribes and stops reading; virtual contacts send 80,000 messages (sandbox
// bursts); then the client reads everything held for it until the daemon's close: the daemon's buffer plus both
// sockets' kernel buffers. Run on a tree before and after a change to compare.
import { connect } from 'node:net';
import { benchDaemon, pairedSession } from './support/gateway.js';

const BURSTS = 40;
const daemon = await benchDaemon();
try {
  await pairedSession(daemon, 'a', '+15550900001');
  const socket = connect({ port: Number(new URL(daemon.url).port), host: '127.0.0.1' });
  socket.write(`GET /api/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${daemon.masterKey}\r\n\r\n`);
  await new Promise((r) => socket.once('data', r));
  socket.pause();
  for (let i = 0; i < BURSTS; i++) await daemon.request('POST', '/api/sandbox/sessions/a/inbound/burst', { count: 2000 });
  let held = 0;
  socket.on('data', (chunk: Buffer) => (held += chunk.length));
  socket.resume();
  const dropped = await Promise.race([new Promise<boolean>((r) => socket.once('close', () => r(true))), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
  process.stdout.write(`${JSON.stringify({ events: BURSTS * 2000, heldBytes: held, heldMb: Math.round((held / 1048576) * 100) / 100, droppedByDaemon: dropped })}\n`);
  socket.destroy();
} finally {
  await daemon.cleanup();
}
