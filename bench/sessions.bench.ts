// Sessions at scale: 1,000 sandbox sessions created and paired, the daemon restarted, time until all are CONNECTED, RSS per idle session.
import type { BenchResult } from './types.js';
import { benchDaemon, rssOf, type TestDaemon } from './support/gateway.js';
import { result } from './support/report.js';

const COUNT = Number(process.env.BENCH_SESSIONS ?? 1000);

/** Five RSS readings 200 ms apart; their median. */
async function settledRss(daemon: TestDaemon): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    await new Promise((r) => setTimeout(r, 200));
    samples.push(await rssOf(daemon));
  }
  return samples.sort((a, b) => a - b)[2]!;
}

/** Creates, starts and pairs sessions s<from>… (50 at a time). */
async function pairSessions(daemon: TestDaemon, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, from + count - i) }, async (_, j) => {
        const n = i + j;
        const name = `s${n}`;
        await daemon.request('POST', '/api/sessions', { name, start: true });
        const paired = await daemon.request('POST', `/api/sandbox/sessions/${name}/pair`, { phoneNumber: `+1555092${String(n).padStart(4, '0')}` });
        if (paired.status !== 200) throw new Error(`pair ${name}: ${JSON.stringify(paired.body)}`);
      }),
    );
  }
}

export async function run(): Promise<BenchResult[]> {
  const first = await benchDaemon();
  let restoreMs = 0;
  let perSessionKb = 0;
  let emptyRss = 0;
  try {
    emptyRss = await settledRss(first);
    await pairSessions(first, 0, COUNT);
    await first.stop();
    const booted = performance.now();
    const second = await benchDaemon({ dataDir: first.dataDir });
    try {
      for (;;) {
        const health = (await second.request('GET', '/api/health')).body.data;
        if (health.sessions.connected >= COUNT) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      restoreMs = performance.now() - booted;
      // per-session memory inside one process: RSS of two processes differs by several MB of GC timing alone
      const withRestored = await settledRss(second);
      await pairSessions(second, COUNT, COUNT);
      perSessionKb = ((await settledRss(second)) - withRestored) / COUNT / 1024;
    } finally {
      await second.kill();
    }
  } finally {
    await first.cleanup();
  }
  return [
    result('sessions', `daemon start to ${COUNT} sessions CONNECTED, ms (incl. process start; lower is better)`, restoreMs, 3000, 'ms'),
    result('sessions', `RSS per idle sandbox session, KB: growth of the running daemon as ${COUNT} more are paired (vs the 1 MB target)`, perSessionKb, 1024, 'KB'),
    result('sessions', 'RSS of an empty daemon, MB (context)', emptyRss / 1024 / 1024, emptyRss / 1024 / 1024, 'MB'),
  ];
}
