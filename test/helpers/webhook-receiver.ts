// A real webhook receiver on 127.0.0.1 for tests: records raw bodies, headers and arrival times; answers chosen statuses or holds requests.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './daemon.js';
import { checkEventAsync } from './event-contract.js';

export interface ReceivedDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  /** the exact bytes received */
  raw: Buffer;
  json: any;
  /** Date.now() when the body had fully arrived */
  at: number;
  /** the status this receiver answered (undefined while held) */
  status?: number;
  /** true once the answer was fully written to the socket */
  answered: boolean;
}

/** What to answer: a status code, or 'hold' to keep the request open until release() */
export type Answer = number | 'hold';

export interface Receiver {
  /** http://127.0.0.1:PORT */
  base: string;
  port: number;
  received: ReceivedDelivery[];
  /** deliveries that arrived on `path` (default: all) */
  on(path: string): ReceivedDelivery[];
  /** decides the answer per request; the default answers 200 */
  answer: (delivery: ReceivedDelivery, indexOnPath: number) => Answer;
  /** answers every held request with `status` */
  release(status?: number): void;
  /** waits until `count` deliveries arrived on `path` (default: all paths) */
  waitForCount(count: number, path?: string, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  /** stops listening (connections are cut); start() listens again on the same port */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const held: Array<{ delivery: ReceivedDelivery; res: ServerResponse }> = [];
  const drifts: Error[] = [];
  const checked = <T>(value: T): T => {
    if (drifts.length) throw drifts[0];
    return value;
  };
  let server: Server;
  const reply = (delivery: ReceivedDelivery, res: ServerResponse, status: number) => {
    delivery.status = status;
    res.statusCode = status;
    res.end('ok', () => {
      delivery.answered = true;
    });
  };
  const receiver: Receiver = {
    base: '',
    port,
    received: [],
    on: (path) => checked(receiver.received.filter((d) => d.path === path)),
    answer: () => 200,
    release(status = 200) {
      for (const { delivery, res } of held.splice(0)) reply(delivery, res, status);
    },
    async waitForCount(count, path, timeoutMs = 10_000) {
      const list = () => (path ? receiver.on(path) : receiver.received);
      await waitFor(() => checked(list()).length >= count, timeoutMs, `${count} deliveries${path ? ` on ${path}` : ''} (got ${list().length})`);
      return checked(list());
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
    async start() {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const raw = Buffer.concat(chunks);
          let json: unknown;
          try {
            json = JSON.parse(raw.toString('utf8'));
          } catch {
            json = undefined;
          }
          const path = req.url ?? '/';
          const delivery: ReceivedDelivery = { path, headers: req.headers, raw, json, at: Date.now(), answered: false };
          // every webhook delivery is an event envelope: the contract check fails the test that received a drifting one
          if (req.headers['x-webhook-event'] !== undefined) {
            const drift = checkEventAsync(json, `webhook delivery ${req.headers['x-webhook-event']} on ${path}`);
            if (drift) drifts.push(drift);
          }
          const index = receiver.on(path).length;
          receiver.received.push(delivery);
          const answer = receiver.answer(delivery, index);
          if (answer === 'hold') held.push({ delivery, res });
          else reply(delivery, res, answer);
        });
      });
      await new Promise<void>((done) => server.listen(receiver.port, '127.0.0.1', done));
      receiver.port = (server.address() as AddressInfo).port;
      receiver.base = `http://127.0.0.1:${receiver.port}`;
    },
    async close() {
      receiver.release(200);
      if (server.listening) await receiver.stop();
    },
  };
  await receiver.start();
  return receiver;
}
