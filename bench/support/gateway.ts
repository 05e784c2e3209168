// A real daemon for benchmarks (the test helper's child process), with quiet logs and paired sandbox sessions.
import { pairedSession, startDaemon, type TestDaemon } from '../../test/helpers/daemon.js';

export type { TestDaemon };

export async function benchDaemon(options: { dataDir?: string; config?: string; env?: Record<string, string> } = {}): Promise<TestDaemon> {
  return startDaemon({ ...options, env: { GATEWAY_LOG_LEVEL: 'error', ...options.env } });
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
