// Loads gateway.yaml, overlays GATEWAY_* env vars on the defaults, and validates the result against config/gateway.schema.json.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { createRequire } from 'node:module';
import { DEFAULT_CONFIG } from './defaults.js';
import type { GatewayConfig } from './types.js';

export const CONFIG_SCHEMA_PATH = new URL('../../../config/gateway.schema.json', import.meta.url);

export class ConfigError extends Error {
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(problems.length ? `${message}:\n  ${problems.join('\n  ')}` : message);
    this.name = 'ConfigError';
  }
}

export interface LoadOptions {
  /** explicit --config path; otherwise GATEWAY_CONFIG, then ./gateway.yaml when it exists */
  configPath?: string;
  env?: NodeJS.ProcessEnv;
}

type EnvRule = { path: string[]; type: 'string' | 'integer' | 'boolean' | 'list' };

const ENV_VARS: Record<string, EnvRule> = {
  GATEWAY_HOST: { path: ['host'], type: 'string' },
  GATEWAY_PORT: { path: ['port'], type: 'integer' },
  GATEWAY_DATA_DIR: { path: ['dataDir'], type: 'string' },
  GATEWAY_MASTER_KEY: { path: ['auth', 'masterKey'], type: 'string' },
  GATEWAY_ENCRYPTION_KEY: { path: ['auth', 'encryptionKey'], type: 'string' },
  GATEWAY_STORE: { path: ['store', 'kind'], type: 'string' },
  GATEWAY_DATABASE_URL: { path: ['store', 'postgres', 'url'], type: 'string' },
  GATEWAY_NODE_ID: { path: ['cluster', 'nodeId'], type: 'string' },
  GATEWAY_ADVERTISE_URL: { path: ['cluster', 'advertiseUrl'], type: 'string' },
  GATEWAY_CLUSTER_SECRET: { path: ['cluster', 'secret'], type: 'string' },
  GATEWAY_LEASE_SECONDS: { path: ['cluster', 'leaseSeconds'], type: 'integer' },
  GATEWAY_DEFAULT_ENGINE: { path: ['engine', 'default'], type: 'string' },
  GATEWAY_SANDBOX_WIRE_LOG: { path: ['engine', 'sandbox', 'wireLog'], type: 'string' },
  GATEWAY_BAILEYS_WS_URL: { path: ['engine', 'baileys', 'websocketUrl'], type: 'string' },
  GATEWAY_BAILEYS_MEDIA_HOSTS: { path: ['engine', 'baileys', 'mediaHosts'], type: 'list' },
  GATEWAY_UNDECRYPTABLE_AFTER_SECONDS: { path: ['engine', 'decryption', 'undecryptableAfterSeconds'], type: 'integer' },
  GATEWAY_MEDIA_ALLOW_PRIVATE_URLS: { path: ['media', 'allowPrivateUrls'], type: 'boolean' },
  GATEWAY_S3_ALLOW_PRIVATE_ENDPOINT: { path: ['media', 's3AllowPrivateEndpoint'], type: 'boolean' },
  GATEWAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS: { path: ['webhooks', 'allowPrivateTargets'], type: 'boolean' },
  GATEWAY_GOVERNOR_ENABLED: { path: ['governor', 'enabled'], type: 'boolean' },
  GATEWAY_CONSOLE_ENABLED: { path: ['console', 'enabled'], type: 'boolean' },
  CLIENT_TOKEN_MAX_TTL: { path: ['clientTokens', 'maxTtlSeconds'], type: 'integer' },
  GATEWAY_LOG_LEVEL: { path: ['logLevel'], type: 'string' },
};

export function resolveConfigPath(options: LoadOptions = {}): string | undefined {
  const env = options.env ?? process.env;
  const explicit = options.configPath ?? env.GATEWAY_CONFIG;
  if (explicit) return resolve(explicit);
  const local = resolve('gateway.yaml');
  return existsSync(local) ? local : undefined;
}

export function loadConfig(options: LoadOptions = {}): GatewayConfig {
  const env = options.env ?? process.env;
  const path = resolveConfigPath(options);
  const fromFile = path ? readYaml(path, options.configPath !== undefined || env.GATEWAY_CONFIG !== undefined) : {};
  const merged = deepMerge(structuredClone(DEFAULT_CONFIG) as unknown as Record<string, unknown>, fromFile);
  // a relative dataDir (the default ./data included) is the config file's neighbour, wherever the command runs from;
  // GATEWAY_DATA_DIR, like any path typed in a shell, is relative to the current directory
  if (path && typeof merged.dataDir === 'string' && !isAbsolute(merged.dataDir)) merged.dataDir = resolve(dirname(path), merged.dataDir);
  const problems = applyEnv(merged, env);
  if (problems.length) throw new ConfigError('invalid environment', problems);
  validate(merged, path);
  const config = merged as unknown as GatewayConfig;
  config.dataDir = resolve(config.dataDir);
  if (config.server.headersTimeoutMs > config.server.requestTimeoutMs) {
    throw new ConfigError(`invalid configuration${path ? ` in ${path}` : ''}`, ['server.headersTimeoutMs: must not exceed server.requestTimeoutMs']);
  }
  const health = config.sessions.health;
  if (health.silenceSeconds > 0 && health.keepAliveSeconds >= health.silenceSeconds) {
    // an idle healthy session gets a frame only when its keep-alive is answered: it would be probed at every silence
    throw new ConfigError(`invalid configuration${path ? ` in ${path}` : ''}`, ['sessions.health.keepAliveSeconds: must be less than sessions.health.silenceSeconds']);
  }
  if (config.store.kind === 'postgres' && !config.store.postgres.url) {
    throw new ConfigError(`invalid configuration${path ? ` in ${path}` : ''}`, ['store.postgres.url: required when store.kind is postgres (or set GATEWAY_DATABASE_URL)']);
  }
  if (config.store.kind === 'postgres' && !config.cluster.secret) {
    throw new ConfigError(`invalid configuration${path ? ` in ${path}` : ''}`, ['cluster.secret: required when store.kind is postgres (or set GATEWAY_CLUSTER_SECRET): the same random secret on every node, other than the master key']);
  }
  if (config.store.kind === 'postgres' && config.cluster.secret === config.auth.masterKey) {
    throw new ConfigError(`invalid configuration${path ? ` in ${path}` : ''}`, ['cluster.secret: must differ from the master key (the master key is a credential callers send; the hop key is the nodes\' alone)']);
  }
  if (config.store.kind === 'postgres' && config.backup.schedule !== 'off') {
    throw new ConfigError(`invalid configuration${path ? ` in ${path}` : ''}`, ['backup.schedule: the daemon backs up a SQLite store only; back PostgreSQL up with pg_dump']);
  }
  return config;
}

/** yaml (tens of files, 40–180 ms to load) is required when a file is read or written, not when the CLI or daemon starts. */
export const yaml = (): typeof import('yaml') => createRequire(import.meta.url)('yaml') as typeof import('yaml');

function readYaml(path: string, required: boolean): Record<string, unknown> {
  if (!existsSync(path)) {
    if (required) throw new ConfigError(`config file not found: ${path}`);
    return {};
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = yaml().parse(text);
  } catch (err) {
    throw new ConfigError(`${path} is not valid YAML: ${(err as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`${path} must hold a mapping of settings`);
  const reserved = reservedKeys(parsed, []);
  if (reserved.length) throw new ConfigError(`${path} uses reserved keys`, reserved.map((where) => `${where}: reserved key, not a setting`));
  return parsed as Record<string, unknown>;
}

/** Keys that would reach Object.prototype (or a constructor) through a merge; no setting has these names. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Every reserved key in the parsed file, as dotted paths; a file with any is refused, not cleaned. */
function reservedKeys(node: unknown, at: string[]): string[] {
  if (typeof node !== 'object' || node === null) return [];
  return Object.keys(node).flatMap((key) => {
    const here = [...at, key];
    return [...(RESERVED_KEYS.has(key) ? [here.join('.')] : []), ...reservedKeys((node as Record<string, unknown>)[key], here)];
  });
}

function applyEnv(target: Record<string, unknown>, env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  for (const [name, rule] of Object.entries(ENV_VARS)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    let value: unknown = raw;
    if (rule.type === 'integer') {
      value = /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (Number.isNaN(value)) problems.push(`${name}: must be an integer, got "${raw}"`);
    } else if (rule.type === 'list') {
      value = raw.split(',').map((item) => item.trim()).filter(Boolean);
    } else if (rule.type === 'boolean') {
      const lowered = raw.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(lowered)) value = true;
      else if (['0', 'false', 'no', 'off'].includes(lowered)) value = false;
      else problems.push(`${name}: must be true or false, got "${raw}"`);
    }
    setPath(target, rule.path, value);
  }
  return problems;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

function deepMerge(base: Record<string, unknown>, overlay: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(overlay)) {
    if (RESERVED_KEYS.has(key)) continue;
    const current = Object.hasOwn(base, key) ? base[key] : undefined;
    // A section whose settings are all commented out parses as null: it means "the defaults", as in gateway.example.yaml.
    if (value === null && isPlainObject(current)) continue;
    if (isPlainObject(value) && isPlainObject(current)) deepMerge(current, value);
    else base[key] = value;
  }
  return base;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

let compiledValidator: ReturnType<Ajv['compile']> | undefined;

function validate(config: Record<string, unknown>, path: string | undefined): void {
  compiledValidator ??= new Ajv({ allErrors: true }).compile(JSON.parse(readFileSync(CONFIG_SCHEMA_PATH, 'utf8')));
  if (compiledValidator(config)) return;
  const problems = (compiledValidator.errors ?? []).map((e) => {
    const where = (e.instancePath || '/').slice(1).replace(/\//g, '.') || '(root)';
    if (e.keyword === 'additionalProperties') return `${where === '(root)' ? '' : where + '.'}${(e.params as { additionalProperty: string }).additionalProperty}: unknown setting`;
    if (e.keyword === 'enum') return `${where}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    return `${where}: ${e.message}`;
  });
  throw new ConfigError(`invalid configuration${path ? ` in ${path}` : ''}`, problems);
}
