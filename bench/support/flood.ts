// A flooding client in its own process (so its CPU is not the measuring client's): autocannon loads from FLOOD_LOADS
// (JSON: [{url, method, connections, headers, bodyBytes | body}]) for FLOOD_DURATION_S seconds, then writes their
// counts and its own CPU time as JSON to FLOOD_REPORT. Prints "0" first, like the other helpers print their port, once the loads started.
import { writeFileSync } from 'node:fs';
import autocannon from 'autocannon';

interface Load {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  connections: number;
  headers?: Record<string, string>;
  body?: string;
  /** a junk JSON-typed body of this many bytes */
  bodyBytes?: number;
}

const loads = JSON.parse(process.env.FLOOD_LOADS ?? '[]') as Load[];
const duration = Number(process.env.FLOOD_DURATION_S ?? 10);
const runs = loads.map((load) =>
  autocannon({
    url: load.url,
    method: load.method,
    connections: load.connections,
    duration,
    timeout: 30,
    headers: load.body !== undefined || load.bodyBytes ? { 'content-type': 'application/json', ...load.headers } : load.headers,
    body: load.bodyBytes ? 'x'.repeat(load.bodyBytes) : load.body,
  }),
);
process.stdout.write('0\n');
const cpuAtStart = process.cpuUsage();
const results = await Promise.all(runs);
const cpu = process.cpuUsage(cpuAtStart);
const report = results.map((r, i) => ({
  name: loads[i]!.name,
  requests: r.requests.total,
  rps: r.requests.average,
  statuses: { '2xx': r['2xx'], '4xx': r['4xx'], '5xx': r['5xx'] },
  /** the answers by status code (401, 429, 503…) */
  codes: r.statusCodeStats,
  /** CPU µs this flood process used (shared by its loads when it runs several) */
  cpuMicros: cpu.user + cpu.system,
  errors: r.errors,
  timeouts: r.timeouts,
}));
writeFileSync(process.env.FLOOD_REPORT!, JSON.stringify(report));
