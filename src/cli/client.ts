// The CLI's one HTTP client: finds the daemon (flag, env, gateway.yaml, default), sends the master key, surfaces the daemon's errors.
import { applyServiceEnvFile, DEFAULT_ENV_FILE } from '../config/env-file.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { GatewayConfig } from '../config/types.js';
import { ExitCode } from './exit-codes.js';

export interface GlobalOptions {
  url?: string;
  masterKey?: string;
  config?: string;
  json?: boolean;
}

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.Failure,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

let envFileRead: string | undefined;

/** Before any command runs: takes in the service's environment file when the command line names no configuration. */
export function takeServiceEnvironment(globals: GlobalOptions): void {
  try {
    envFileRead = applyServiceEnvFile(globals.config);
  } catch (err) {
    throw new CliError((err as Error).message, ExitCode.Config);
  }
}

/** The environment file takeServiceEnvironment read, if any. */
export const serviceEnvFileRead = (): string | undefined => envFileRead;

/** The configuration for commands that work on the files themselves; an invalid one exits with the configuration code. */
export function loadCliConfig(globals: GlobalOptions): GatewayConfig {
  try {
    return loadConfig({ configPath: globals.config });
  } catch (err) {
    throw new CliError((err as Error).message, ExitCode.Config);
  }
}

export interface DaemonClient {
  baseUrl: string;
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** a GET of a list route: the page and the full count (X-Total-Count) */
  list<T = unknown>(path: string): Promise<{ items: T[]; total: number }>;
  /** the raw response, for streams (events tail) */
  raw(method: string, path: string, init?: { headers?: Record<string, string>; signal?: AbortSignal }): Promise<Response>;
}

export function createClient(options: GlobalOptions): DaemonClient {
  const env = process.env;
  // the same configuration and environment as every other command: a named file that is missing or invalid stops here
  // (exit 4) rather than sending the request, keyless, to the default address
  const config = loadCliConfig(options);
  const configPath = resolveConfigPath({ configPath: options.config });
  const baseUrl = (options.url ?? env.GATEWAY_URL ?? `http://${hostForUrl(config.host)}:${config.port}`).replace(/\/+$/, '');
  const masterKey = options.masterKey ?? env.GATEWAY_MASTER_KEY ?? config.auth.masterKey;

  async function raw(method: string, path: string, init: { headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {}) {
    const headers: Record<string, string> = { ...init.headers };
    if (masterKey) headers.Authorization = `Bearer ${masterKey}`;
    try {
      return await fetch(baseUrl + path, { method, headers, body: init.body, signal: init.signal });
    } catch (err) {
      const detail = (err as { cause?: { code?: string; message?: string } }).cause;
      const cause = detail?.code ?? detail?.message ?? (err as Error).message;
      throw new CliError(`cannot reach the gateway daemon at ${baseUrl} (${cause}); is \`gateway serve\` running?`, ExitCode.Unreachable);
    }
  }

  /** The parsed `data` of a 2xx answer with the response; the daemon's error, as `CODE: message`, otherwise. */
  async function send<T>(method: string, path: string, body?: unknown): Promise<{ data: T; response: Response }> {
    const response = await raw(method, path, body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    let parsed: { data?: T; error?: { code: string; message: string } } | undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      if (response.status === 401 && !masterKey) throw new CliError(`${parsed?.error?.code ?? 'UNAUTHORIZED'}: ${parsed?.error?.message ?? 'no key'}\n${noKeyAdvice(configPath, envFileRead)}`);
      if (parsed?.error) throw new CliError(`${parsed.error.code}: ${parsed.error.message}`);
      throw new CliError(`HTTP ${response.status} from ${method} ${path}`);
    }
    return { data: parsed?.data as T, response };
  }

  return {
    baseUrl,
    raw,
    request: async <T>(method: string, path: string, body?: unknown): Promise<T> => (await send<T>(method, path, body)).data,
    async list<T>(path: string): Promise<{ items: T[]; total: number }> {
      const { data, response } = await send<T[]>('GET', path);
      const total = Number(response.headers.get('X-Total-Count') ?? data.length);
      return { items: data, total };
    },
  };
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** Why the CLI had no key to send, and how to point it at the service's configuration. */
function noKeyAdvice(configPath: string | undefined, envFile: string | undefined): string {
  const read = configPath
    ? `it read ${configPath}${envFile ? ` (named in ${envFile})` : ''}, which sets no auth.masterKey`
    : `it found no configuration (no --config, GATEWAY_CONFIG, ./gateway.yaml or ${DEFAULT_ENV_FILE})`;
  return (
    `the CLI sent no key: ${read}. Point it at the service's configuration: --config /etc/session-gateway/gateway.yaml, ` +
    `GATEWAY_CONFIG, or GATEWAY_ENV_FILE=<the unit's EnvironmentFile>, as a user who can read it (sudo -u gateway gateway …); or set GATEWAY_MASTER_KEY`
  );
}
