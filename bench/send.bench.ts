// Send path and client-token path: POST /api/messages/send (sandbox, stored, one webhook) against a bare Koa route, same
// connections; the daemon's cheapest route (the floor of its own stack); and, counting a request as done only once its
// webhook POST has arrived, against a bare Koa route that also makes that POST (the ceiling for any gateway here).
import autocannon from 'autocannon';
import type { BenchResult } from './types.js';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { benchDaemon, pairedSession } from './support/gateway.js';
import { startChild, type Child } from './support/process.js';
import { cpuMicros } from './support/cpu.js';
import { result } from './support/report.js';

const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 6);
const ROUNDS = 2;
const DRAIN_TIMEOUT_MS = 60_000;

interface Load {
  rps: number;
  p99: number;
  non2xx: number;
  /** requests answered 2xx per second of the whole round, counted until the last of their webhook POSTs reached the receiver */
  sustained: number;
  /** CPU µs per 2xx request over the same time: the server, and every process (server, receiver, autocannon) */
  serverCpu: number;
  allCpu: number;
}

/** What runs on the machine's cores during one target's rounds. */
interface Target {
  url: string;
  serverPid: number;
  receiver?: Child;
}

async function received(receiver: Child): Promise<number> {
  return ((await (await fetch(`http://127.0.0.1:${receiver.port}/count`)).json()) as { received: number }).received;
}

/** One autocannon round (a POST of `body`, or a GET without one); with a receiver, waits until it has one POST per 2xx answer. */
async function load(target: Target, headers: Record<string, string>, body?: string): Promise<Load> {
  const { receiver } = target;
  const before = receiver ? await received(receiver) : 0;
  const cpuBefore = cpuOf(target);
  const started = performance.now();
  const out = await autocannon({
    url: target.url,
    method: body === undefined ? 'GET' : 'POST',
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body,
  });
  const answered = out['2xx'];
  if (receiver) {
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while ((await received(receiver)) - before < answered) {
      if (Date.now() > deadline) throw new Error(`send bench: the receiver did not get ${answered} webhook POSTs within ${DRAIN_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuOf(target);
  return {
    rps: out.requests.average,
    p99: out.latency.p99,
    non2xx: out.non2xx,
    sustained: answered / seconds,
    serverCpu: (cpuAfter.server - cpuBefore.server) / answered,
    allCpu: (cpuAfter.all - cpuBefore.all) / answered,
  };
}

function cpuOf(target: Target): { server: number; all: number } {
  const server = cpuMicros(target.serverPid) ?? NaN;
  const receiver = target.receiver ? (cpuMicros(target.receiver.process.pid) ?? NaN) : 0;
  return { server, all: server + receiver + cpuMicros()! };
}

/** The average of rounds of the same load (p99 as the worst round's). */
function mean(rounds: Load[]): Load {
  const avg = (pick: (l: Load) => number) => rounds.reduce((sum, l) => sum + pick(l), 0) / rounds.length;
  return {
    rps: avg((l) => l.rps),
    p99: Math.max(...rounds.map((l) => l.p99)),
    non2xx: avg((l) => l.non2xx),
    sustained: avg((l) => l.sustained),
    serverCpu: avg((l) => l.serverCpu),
    allCpu: avg((l) => l.allCpu),
  };
}

export async function run(): Promise<BenchResult[]> {
  const body = JSON.stringify({ session: 'a', chatId: '+15550900002', type: 'text', text: 'benchmark message' });
  const receiver = await startChild('./receiver.js');
  const ceilingReceiver = await startChild('./receiver.js');
  const bare = await startChild('./bare-koa.js');
  const inFlight = String(DEFAULT_CONFIG.webhooks.perWebhookConcurrency);
  const ceiling = await startChild('./bare-koa.js', { WEBHOOK_URL: `http://127.0.0.1:${ceilingReceiver.port}/hook`, IN_FLIGHT: inFlight });
  const durableReceiver = await startChild('./receiver.js');
  const durable = await startChild('./bare-koa.js', { WEBHOOK_URL: `http://127.0.0.1:${durableReceiver.port}/hook`, IN_FLIGHT: inFlight, DURABLE: '1' });
  const daemon = await benchDaemon();
  try {
    await pairedSession(daemon, 'a', '+15550900001');
    await pairedSession(daemon, 'b', '+15550900002');
    const key = (await daemon.request('POST', '/api/admin/keys', { name: 'bench', scopes: ['messages:send'] })).body.data.key;
    const hook = await daemon.request('POST', '/api/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['message.sent'] });
    if (hook.status !== 201) throw new Error(`send bench: no webhook subscribed (${hook.status})`);
    await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedActions: 'send_message' });
    const token = (await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'bench', ttlSeconds: 900 })).body.data.token;

    const path = '/api/messages/send';
    const bareTarget: Target = { url: `http://127.0.0.1:${bare.port}${path}`, serverPid: bare.process.pid! };
    const ceilingTarget: Target = { url: `http://127.0.0.1:${ceiling.port}${path}`, serverPid: ceiling.process.pid!, receiver: ceilingReceiver };
    const durableTarget: Target = { url: `http://127.0.0.1:${durable.port}${path}`, serverPid: durable.process.pid!, receiver: durableReceiver };
    const daemonTarget: Target = { url: `${daemon.url}${path}`, serverPid: daemon.child.pid!, receiver };
    const healthTarget: Target = { url: `${daemon.url}/api/health`, serverPid: daemon.child.pid! };
    const keyHeaders = { authorization: `Bearer ${key}` };
    const tokenHeaders = { authorization: `Bearer ${token}` };
    // warm every server up first, then alternate them, so that drift in the machine's speed does not land on one side
    await load(bareTarget, {}, body);
    await load(ceilingTarget, {}, body);
    await load(durableTarget, {}, body);
    await load(daemonTarget, keyHeaders, body);
    const rounds = { bare: [] as Load[], health: [] as Load[], ceiling: [] as Load[], durable: [] as Load[], key: [] as Load[], token: [] as Load[] };
    for (let round = 0; round < ROUNDS; round++) {
      rounds.bare.push(await load(bareTarget, {}, body));
      rounds.health.push(await load(healthTarget, {}));
      rounds.ceiling.push(await load(ceilingTarget, {}, body));
      rounds.durable.push(await load(durableTarget, {}, body));
      rounds.key.push(await load(daemonTarget, keyHeaders, body));
      rounds.token.push(await load(daemonTarget, tokenHeaders, body));
    }
    const [baseline, health, withCeiling, withDurable, withKey, withToken] = [rounds.bare, rounds.health, rounds.ceiling, rounds.durable, rounds.key, rounds.token].map(mean) as [Load, Load, Load, Load, Load, Load];
    for (const [name, l] of [['api key', withKey], ['client token', withToken]] as const) {
      if (l.non2xx) process.stderr.write(`send bench: ${l.non2xx} non-2xx answers with the ${name}\n`);
    }
    return [
      result('send', 'requests/s (API key vs bare Koa)', withKey.rps, baseline.rps, 'req/s'),
      result('send', 'p99 latency ms (API key vs bare Koa; lower is better)', withKey.p99, baseline.p99, 'ms'),
      result('send', "floor: requests/s of the daemon's cheapest route, GET /api/health without a key (vs bare Koa)", health.rps, baseline.rps, 'req/s'),
      result('send', 'ceiling: requests/s of bare Koa + one webhook POST each, all POSTs arrived (vs bare Koa)', withCeiling.sustained, baseline.sustained, 'req/s'),
      result('send', 'requests/s, all webhook POSTs arrived (API key vs that ceiling)', withKey.sustained, withCeiling.sustained, 'req/s'),
      result('send', 'CPU µs per request in the server (API key vs bare Koa; lower is better)', withKey.serverCpu, baseline.serverCpu, 'µs'),
      result('send', 'CPU µs per request in the server (ceiling vs bare Koa; lower is better)', withCeiling.serverCpu, baseline.serverCpu, 'µs'),
      result('send', 'CPU µs per request in the server (API key vs ceiling; lower is better)', withKey.serverCpu, withCeiling.serverCpu, 'µs'),
      result('send', 'durable ceiling: requests/s of the ceiling + the writes DESIGN §4 asks (message row and delivery row committed before the answer, outcome recorded), all POSTs arrived (vs ceiling)', withDurable.sustained, withCeiling.sustained, 'req/s'),
      result('send', 'CPU µs per request in the server (durable ceiling vs ceiling; lower is better)', withDurable.serverCpu, withCeiling.serverCpu, 'µs'),
      result('send', 'CPU µs per request in the server (API key vs durable ceiling; lower is better)', withKey.serverCpu, withDurable.serverCpu, 'µs'),
      result('send', 'requests/s, all webhook POSTs arrived (API key vs durable ceiling)', withKey.sustained, withDurable.sustained, 'req/s'),
      result('send', 'CPU µs per request, all processes: server, receiver, autocannon (API key vs bare Koa; lower is better)', withKey.allCpu, baseline.allCpu, 'µs'),
      result('token-send', 'requests/s (client token vs API key)', withToken.rps, withKey.rps, 'req/s'),
      result('token-send', 'p99 latency ms (client token vs API key; lower is better)', withToken.p99, withKey.p99, 'ms'),
    ];
  } finally {
    await daemon.cleanup();
    await Promise.all([bare, ceiling, durable, receiver, ceilingReceiver, durableReceiver].map((child) => child.stop()));
  }
}
