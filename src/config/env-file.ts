// The service's environment file (/etc/session-gateway/gateway.env): the systemd unit reads it with EnvironmentFile=,
// and the CLI reads the same file when it is given no configuration, so `gateway …` on the host finds the service's
// config, data directory and key without flags.
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from './load.js';

export const DEFAULT_ENV_FILE = '/etc/session-gateway/gateway.env';

/** The part of systemd's EnvironmentFile= syntax such a file needs: KEY=VALUE lines, `#` and `;` comments, values optionally in single or double quotes (no escapes, no continued lines). */
export function parseEnvFile(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    let value = match[2]!;
    const quoted = /^"(.*)"$/.exec(value) ?? /^'(.*)'$/.exec(value);
    if (quoted) value = quoted[1]!;
    vars[match[1]!] = value;
  }
  return vars;
}

/**
 * The environment file the CLI takes in: only when it names no configuration itself (no --config, no GATEWAY_CONFIG, no
 * ./gateway.yaml); GATEWAY_ENV_FILE names another one (then it must exist), or none when set empty; the default one is
 * read when it exists and this user can read it.
 */
export function serviceEnvFile(configFlag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (configFlag || env.GATEWAY_CONFIG || existsSync(resolve('gateway.yaml'))) return undefined;
  // set and empty: no environment file at all (a script, a test, that must not pick up the host's service)
  if (env.GATEWAY_ENV_FILE === '') return undefined;
  if (env.GATEWAY_ENV_FILE) {
    const named = resolve(env.GATEWAY_ENV_FILE);
    if (!existsSync(named)) throw new ConfigError(`environment file not found: ${named} (GATEWAY_ENV_FILE)`);
    return named;
  }
  try {
    accessSync(DEFAULT_ENV_FILE, constants.R_OK);
    return DEFAULT_ENV_FILE;
  } catch {
    return undefined;
  }
}

/**
 * Sets the file's GATEWAY_* variables that the environment does not set already (the caller's own environment wins; no
 * other variable is taken); returns the file read, if any. Run as root, the CLI reads only a file that root owns and no
 * one else may write: a file the service's user could change would steer root's restore or rotation elsewhere.
 */
export function applyServiceEnvFile(configFlag: string | undefined, env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.()): string | undefined {
  const file = serviceEnvFile(configFlag, env);
  if (!file) return undefined;
  let text: string;
  try {
    if (uid === 0) refuseUnsafeForRoot(file);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read the environment file ${file}: ${(err as Error).message}`);
  }
  for (const [name, value] of Object.entries(parseEnvFile(text))) if (name.startsWith('GATEWAY_') && env[name] === undefined) env[name] = value;
  return file;
}

function refuseUnsafeForRoot(file: string): void {
  const { uid, mode } = statSync(file);
  if (uid === 0 && (mode & 0o022) === 0) return;
  throw new ConfigError(
    `refusing to read ${file} as root: it is ${uid === 0 ? 'writable by group or others' : `owned by uid ${uid}`}; ` +
      `make it root's and read-only to others (sudo chown root:gateway ${file} && sudo chmod 0640 ${file})`,
  );
}
