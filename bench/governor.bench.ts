// The send governor's cost when the pace is not the limit: POST /api/sessions/{session}/messages/send (text, sandbox,
// API key, a reply to a contact who wrote) on a governed session whose pace, burst and gap never hold a send back
// (every check runs: policy, correspondent lookup, bucket, queue), against an exempted session of the same daemon
// (the governor skipped), alternating rounds in the same run. Daemon CPU µs per send; target ≤ 1.05.
import autocannon from 'autocannon';
import type { BenchResult } from './types.js';
import { benchDaemon, pairedSession } from './support/gateway.js';
import { cpuMicros } from './support/cpu.js';
import { result } from './support/report.js';

const CONNECTIONS = 16;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 6);
const ROUNDS = Number(process.env.BENCH_GOVERNOR_ROUNDS ?? 3);
const CONTACT = '+15550910009';

interface Round {
  rps: number;
  cpuPerSend: number;
  non2xx: number;
}

async function round(url: string, pid: number, key: string): Promise<Round> {
  const before = cpuMicros(pid)!;
  const out = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ chatId: CONTACT, type: 'text', text: 'thanks, your order is on its way', linkPreview: false }),
  });
  return { rps: out.requests.average, cpuPerSend: (cpuMicros(pid)! - before) / out['2xx'], non2xx: out.non2xx };
}

const mean = (rounds: Round[], pick: (r: Round) => number) => rounds.reduce((sum, r) => sum + pick(r), 0) / rounds.length;

export async function run(): Promise<BenchResult[]> {
  const daemon = await benchDaemon({ env: { GATEWAY_GOVERNOR_ENABLED: 'true' }, config: 'governor:\n  perMinute: 1000000\n  burst: 1000000\n  recipientGapSeconds: 0\n' });
  try {
    for (const [name, phone] of [['governed', '+15550910001'], ['exempt', '+15550910002']] as const) {
      await pairedSession(daemon, name, phone);
      // the contact wrote first: the send is a reply, as most of a normal integration's are
      const wrote = await daemon.request('POST', `/api/sandbox/sessions/${name}/inbound`, { from: CONTACT, type: 'text', text: 'where is my order?' });
      if (wrote.status !== 200) throw new Error(`governor bench: inbound ${wrote.status}`);
    }
    const exempted = await daemon.request('PATCH', '/api/sessions/exempt', { config: { governor: { exempt: true } } });
    if (exempted.status !== 200) throw new Error(`governor bench: exemption ${exempted.status}`);
    const key = (await daemon.request('POST', '/api/admin/keys', { name: 'bench', scopes: ['messages:send'] })).body.data.key as string;
    const pid = daemon.child.pid!;
    const url = (session: string) => `${daemon.url}/api/sessions/${session}/messages/send`;
    await round(url('governed'), pid, key);
    await round(url('exempt'), pid, key);
    const governed: Round[] = [];
    const exempt: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      exempt.push(await round(url('exempt'), pid, key));
      governed.push(await round(url('governed'), pid, key));
    }
    const queued = (await daemon.request('GET', '/api/sessions/governed/queue')).body.data.length as number;
    const non2xx = mean(governed, (r) => r.non2xx) + mean(exempt, (r) => r.non2xx);
    if (non2xx || queued) process.stderr.write(`governor bench: ${non2xx} non-2xx answers, ${queued} sends queued (the pace was a limit)\n`);
    return [
      result('governor', 'daemon CPU µs per send, governor on, pace not the limit (vs the same daemon\'s exempted session; lower is better, target ≤ 1.05)', mean(governed, (r) => r.cpuPerSend), mean(exempt, (r) => r.cpuPerSend), 'µs'),
      result('governor', 'sends/s, governor on, pace not the limit (vs exempted session)', mean(governed, (r) => r.rps), mean(exempt, (r) => r.rps), 'req/s'),
    ];
  } finally {
    await daemon.cleanup();
  }
}
