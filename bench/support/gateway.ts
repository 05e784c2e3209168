// A real daemon for benchmarks (the test helper's child process), with quiet logs and paired sandbox sessions.
import { pairedSession, startDaemon, type TestDaemon } from '../../test/helpers/daemon.js';

export type { TestDaemon };

/**
 * BENCH_DAEMON_NODE_OPTIONS: node flags for the benchmarked daemon, space-separated (NODE_OPTIONS refuses some of them):
 * `--cpu-prof --cpu-prof-dir=prof` writes a CPU profile when the daemon exits.
 */
const DAEMON_NODE_ARGS = (process.env.BENCH_DAEMON_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);

export async function benchDaemon(options: { dataDir?: string; config?: string; env?: Record<string, string> } = {}): Promise<TestDaemon> {
  const daemon = await startDaemon({ ...options, nodeArgs: DAEMON_NODE_ARGS, env: { GATEWAY_LOG_LEVEL: 'error', ...options.env } });
  if (DAEMON_NODE_ARGS.length === 0) return daemon;
  // a profile is written only by a process that exits by itself: SIGTERM (a graceful stop) before the cleanup's SIGKILL
  const { cleanup } = daemon;
  daemon.cleanup = async () => {
    await daemon.stop();
    await cleanup();
  };
  return daemon;
}

export async function rssOf(daemon: TestDaemon): Promise<number> {
  const metrics = (await daemon.request('GET', '/metrics')).body as string;
  return Number(/gateway_process_resident_memory_bytes (\d+)/.exec(metrics)![1]);
}

export async function heapUsedOf(daemon: TestDaemon): Promise<number> {
  const metrics = (await daemon.request('GET', '/metrics')).body as string;
  return Number(/gateway_nodejs_heap_size_used_bytes (\d+)/.exec(metrics)![1]);
}

export { pairedSession };
