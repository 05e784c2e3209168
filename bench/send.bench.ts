// Send path and client-token path: POST /api/messages/send (sandbox, stored, one webhook) against a bare Koa route, same connections.
import autocannon from 'autocannon';
import type { BenchResult } from './types.js';
import { benchDaemon, pairedSession } from './support/gateway.js';
import { startChild } from './support/process.js';
import { result } from './support/report.js';

const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 6);
const ROUNDS = 2;

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(url: string, headers: Record<string, string>, body: string): Promise<Load> {
  const out = await autocannon({ url, method: 'POST', connections: CONNECTIONS, duration: DURATION_S, headers: { 'content-type': 'application/json', ...headers }, body });
  return { rps: out.requests.average, p50: out.latency.p50, p99: out.latency.p99, non2xx: out.non2xx };
}

/** The average of rounds of the same load (p99 as the worst round's). */
function mean(rounds: Load[]): Load {
  const avg = (pick: (l: Load) => number) => rounds.reduce((sum, l) => sum + pick(l), 0) / rounds.length;
  return { rps: avg((l) => l.rps), p50: avg((l) => l.p50), p99: Math.max(...rounds.map((l) => l.p99)), non2xx: avg((l) => l.non2xx) };
}

export async function run(): Promise<BenchResult[]> {
  const body = JSON.stringify({ session: 'a', chatId: '+15550900002', type: 'text', text: 'benchmark message' });
  const bare = await startChild('./bare-koa.js');
  const receiver = await startChild('./receiver.js');
  const daemon = await benchDaemon();
  try {
    await pairedSession(daemon, 'a', '+15550900001');
    await pairedSession(daemon, 'b', '+15550900002');
    const key = (await daemon.request('POST', '/api/admin/keys', { name: 'bench', scopes: ['messages:send'] })).body.data.key;
    const hook = await daemon.request('POST', '/api/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['message.sent'] });
    if (hook.status !== 201) process.stderr.write(`send bench: no webhook subscribed (${hook.status})\n`);
    await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedActions: 'send_message' });
    const token = (await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'bench', ttlSeconds: 900 })).body.data.token;

    const bareUrl = `http://127.0.0.1:${bare.port}/api/messages/send`;
    const sendUrl = `${daemon.url}/api/messages/send`;
    const keyHeaders = { authorization: `Bearer ${key}` };
    const tokenHeaders = { authorization: `Bearer ${token}` };
    // warm both servers up first, then alternate the bare route and the daemon's two paths, so that drift in the
    // machine's speed does not land on one side
    await load(bareUrl, {}, body);
    await load(sendUrl, keyHeaders, body);
    const bareRounds: Load[] = [];
    const keyRounds: Load[] = [];
    const tokenRounds: Load[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bareRounds.push(await load(bareUrl, {}, body));
      keyRounds.push(await load(sendUrl, keyHeaders, body));
      tokenRounds.push(await load(sendUrl, tokenHeaders, body));
    }
    const baseline = mean(bareRounds);
    const withKey = mean(keyRounds);
    const withToken = mean(tokenRounds);
    for (const [name, l] of [['api key', withKey], ['client token', withToken]] as const) {
      if (l.non2xx) process.stderr.write(`send bench: ${l.non2xx} non-2xx answers with the ${name}\n`);
    }
    return [
      result('send', 'requests/s (API key vs bare Koa)', withKey.rps, baseline.rps, 'req/s'),
      result('send', 'p99 latency ms (API key vs bare Koa; lower is better)', withKey.p99, baseline.p99, 'ms'),
      result('token-send', 'requests/s (client token vs API key)', withToken.rps, withKey.rps, 'req/s'),
      result('token-send', 'p99 latency ms (client token vs API key; lower is better)', withToken.p99, withKey.p99, 'ms'),
    ];
  } finally {
    await daemon.cleanup();
    await bare.stop();
    await receiver.stop();
  }
}
