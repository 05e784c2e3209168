// Whether a gateway daemon runs on this data: one answering at the CLI's or the configured address, or a process
// holding the database open. Commands that rewrite the database on disk refuse to run under a live daemon.
import { join, resolve } from 'node:path';
import type { GatewayConfig } from '../config/types.js';
import { isDatabaseInUse } from '../store/database-file.js';
import { CliError, createClient, type GlobalOptions } from './client.js';
import { ExitCode } from './exit-codes.js';

/** The address of a gateway answering its health route there (not whatever else may listen on the port), if any. */
export async function answeringDaemon(globals: GlobalOptions, config: GatewayConfig): Promise<string | undefined> {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const urls = new Set([createClient(globals).baseUrl, `http://${host}:${config.port}`]);
  for (const url of urls) {
    const answered = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2000) })
      .then((response) => response.json() as Promise<{ data?: { version?: unknown } }>)
      .then((body) => typeof body?.data?.version === 'string', () => false);
    if (answered) return url;
  }
  return undefined;
}

/** Throws when a daemon answers at its address or holds the database open; `what` says why that matters. */
export async function refuseIfRunning(globals: GlobalOptions, config: GatewayConfig, command: string, what: string): Promise<void> {
  const url = await answeringDaemon(globals, config);
  if (url) throw new CliError(`a gateway daemon answers at ${url}: stop it first (${command} ${what})`, ExitCode.Failure);
  const file = join(resolve(config.dataDir), 'gateway.db');
  if (isDatabaseInUse(file)) throw new CliError(`${file} is open in another process (a gateway daemon?): stop it first (${command} ${what})`, ExitCode.Failure);
}
