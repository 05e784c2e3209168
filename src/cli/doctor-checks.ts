// The checks of `gateway doctor`: files and configuration read here, the daemon's state read through its API
// (GET /api/health, GET /api/admin/status). Each gives a verdict and, when not ok, the fix.
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync, statfsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { GatewayConfig } from '../config/types.js';
import type { OperationsStatus } from '../ops/status.js';
import { inspectDatabase, LATEST_SCHEMA_VERSION } from '../store/database-file.js';
import { createClient, type GlobalOptions } from './client.js';
import { userName } from './file-owner.js';

export type Verdict = 'ok' | 'warn' | 'fail';

export interface Check {
  id: string;
  verdict: Verdict;
  detail: string;
  /** what to do, when the verdict is not ok */
  fix?: string;
}

export interface DoctorThresholds {
  /** a session CONNECTING longer than this is stuck, s */
  stuckAfterSeconds: number;
  /** a webhook failing longer than this fails the check, s */
  failingAfterSeconds: number;
  /** an older pending delivery warns, s */
  backlogAgeSeconds: number;
}

const MB = 1024 * 1024;
const ok = (id: string, detail: string): Check => ({ id, verdict: 'ok', detail });
const warn = (id: string, detail: string, fix: string): Check => ({ id, verdict: 'warn', detail, fix });
const fail = (id: string, detail: string, fix: string): Check => ({ id, verdict: 'fail', detail, fix });
const age = (since: string) => Math.max(0, Math.round((Date.now() - Date.parse(since)) / 1000));

export function formatSeconds(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

export async function runChecks(globals: GlobalOptions, thresholds: DoctorThresholds): Promise<Check[]> {
  let config: GatewayConfig;
  try {
    config = loadConfig({ configPath: globals.config });
  } catch (err) {
    return [fail('config', (err as Error).message, 'correct the settings named above (gateway.example.yaml explains each), then run doctor again'), ...versionChecks()];
  }
  const checks: Check[] = [ok('config', 'gateway.yaml and the GATEWAY_* environment are valid')];
  checks.push(masterKeyCheck(globals.masterKey ?? config.auth.masterKey));
  const dataDir = resolve(config.dataDir);
  const dbFile = join(dataDir, 'gateway.db');
  const store = config.store.kind;
  checks.push(...permissionChecks(dataDir, dbFile, resolveConfigPath({ configPath: globals.config })));
  checks.push(diskCheck(dataDir, store));
  checks.push(...(store === 'sqlite' ? databaseChecks(dataDir, dbFile) : [ok('database', 'PostgreSQL (store.postgres.url): the daemon reports whether it reaches it; back it up with pg_dump (docs/SCALING.md)')]));
  checks.push(...(await daemonChecks(globals, thresholds, store)));
  checks.push(...versionChecks());
  return checks;
}

/** Length and variety: a key anyone can guess opens everything, and it also derives the data key. */
function masterKeyCheck(key: string | undefined): Check {
  if (!key) return fail('master-key', 'no master key is set', 'run `gateway init` (it generates one) or set GATEWAY_MASTER_KEY to 32+ random characters');
  const distinct = new Set(key).size;
  const pools = [[/[a-z]/, 26], [/[A-Z]/, 26], [/[0-9]/, 10], [/[^A-Za-z0-9]/, 33]] as const;
  const used = pools.filter(([pattern]) => pattern.test(key));
  const alphabet = used.reduce((sum, [, size]) => sum + size, 0);
  // rough entropy: length × log2 of the alphabet the key draws from, capped by how many characters actually differ
  const bits = Math.round(key.length * Math.log2(Math.max(2, Math.min(alphabet, distinct * 2))));
  if (key.length < 32) return fail('master-key', `the master key has ${key.length} characters`, 'rotate it to a generated one: stop the daemon, run `gateway rotate-master-key`');
  if (bits < 128 || distinct < 12 || used.length < 2) {
    return warn('master-key', `the master key looks weak (${distinct} distinct characters, about ${bits} bits)`, 'rotate it to a generated one: stop the daemon, run `gateway rotate-master-key`');
  }
  return ok('master-key', `${key.length} characters, about ${bits} bits`);
}

/** The data directory private to its owner, and every file in it holding secrets 0600. */
function permissionChecks(dataDir: string, dbFile: string, configPath: string | undefined): Check[] {
  if (!existsSync(dataDir)) return [warn('permissions', `the data directory ${dataDir} does not exist yet`, 'start the daemon once (it creates it 0700), or check dataDir / GATEWAY_DATA_DIR')];
  const loose: string[] = [];
  const mode = (path: string) => statSync(path).mode & 0o777;
  if (mode(dataDir) & 0o077) loose.push(`${dataDir} (${mode(dataDir).toString(8)})`);
  const files = [dbFile, `${dbFile}-wal`, `${dbFile}-shm`, ...(configPath ? [resolve(configPath)] : [])];
  const backups = join(dataDir, 'backups');
  try {
    files.push(...readdirSync(backups).filter((name) => name.endsWith('.db')).map((name) => join(backups, name)));
  } catch {
    // none yet, or not this user's to list (the database check says so)
  }
  for (const file of files) if (existsSync(file) && mode(file) & 0o077) loose.push(`${file} (${mode(file).toString(8)})`);
  const uid = process.getuid?.();
  const foreign = uid !== undefined && statSync(dataDir).uid !== uid && uid !== 0;
  if (loose.length) {
    return [fail('permissions', `readable or writable by others: ${loose.join(', ')}`, `chmod 700 ${dataDir} && chmod 600 the files named (they hold the sealed credentials; the config holds the master key)`)];
  }
  if (foreign) return [warn('permissions', `${dataDir} belongs to another user (uid ${statSync(dataDir).uid})`, 'run doctor as the user the daemon runs as (e.g. sudo -u gateway gateway doctor)')];
  return [ok('permissions', `${dataDir} is 0700 and its database, backups and config are 0600`)];
}

function diskCheck(dataDir: string, store: GatewayConfig['store']['kind']): Check {
  if (!existsSync(dataDir)) return warn('disk', `${dataDir} does not exist`, 'check dataDir / GATEWAY_DATA_DIR');
  const fs = statfsSync(dataDir);
  const free = fs.bavail * fs.bsize;
  const share = fs.blocks ? fs.bavail / fs.blocks : 1;
  const detail = `${Math.round(free / MB)} MB free (${Math.round(share * 100)}%) on the file system of ${dataDir}`;
  const fix =
    store === 'sqlite'
      ? 'free space (old backups in <dataDir>/backups, lower backup.keep, messages.retentionDays, media.localCacheMaxBytes) or grow the disk: SQLite fails writes when it is full'
      : 'free space (lower media.localCacheMaxBytes, or move media to S3) or grow the disk: the media cache lives here (the database is PostgreSQL\'s, on its own host)';
  if (free < 256 * MB || share < 0.02) return fail('disk', detail, fix);
  if (free < 2048 * MB || share < 0.1) return warn('disk', detail, fix);
  return ok('disk', detail);
}

/**
 * A file this user may not read or write (EACCES, EPERM) is not a damaged database: SQLite reports both as "unable to
 * open database file", and a restore would not help. Says whose the files are and how to give them back.
 */
export function accessCheck(dataDir: string, dbFile: string, command: 'doctor' | 'serve' = 'doctor'): Check | undefined {
  const needs: Array<[string, number]> = [[dataDir, constants.R_OK | constants.W_OK | constants.X_OK]];
  for (const file of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) needs.push([file, constants.R_OK | constants.W_OK]);
  for (const [path, mode] of needs) {
    try {
      accessSync(path, mode);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      if (code !== 'EACCES' && code !== 'EPERM') throw err;
      const me = process.getuid?.();
      let whose = '';
      try {
        const stat = statSync(path);
        whose = ` (owned by ${userName(stat.uid)}, mode ${(stat.mode & 0o777).toString(8)})`;
      } catch {
        // not even visible: the directory is closed to this user
      }
      const dirOwner = (() => {
        try {
          return userName(statSync(dataDir).uid);
        } catch {
          return 'the daemon\'s user';
        }
      })();
      const detail = `cannot open ${path}: permission denied (${code})${whose}${me === undefined ? '' : `; ${command} runs as ${userName(me)}`}. This is not damage: the file is not this user's to open`;
      if (command === 'serve') {
        // the daemon's user is the one running: the files go back to it
        const mine = me === undefined ? 'the daemon\'s user' : userName(me);
        return fail('database', detail, `give the data directory back to the daemon's user (a command run as root may have left files owned by root): sudo chown -R ${mine}: ${dataDir}`);
      }
      return fail('database', detail, `run doctor as the user the daemon runs as (sudo -u ${dirOwner} gateway doctor); if a command run as root left files owned by root, give them back: sudo chown -R ${dirOwner}: ${dataDir}`);
    }
  }
  return undefined;
}

function databaseChecks(dataDir: string, dbFile: string): Check[] {
  const denied = accessCheck(dataDir, dbFile);
  if (denied) return [denied];
  if (!existsSync(dbFile)) return [warn('database', `${dbFile} does not exist yet`, 'start the daemon once (it creates the database), or check dataDir / GATEWAY_DATA_DIR')];
  const inspection = inspectDatabase(dbFile, 'quick');
  const checks: Check[] = [];
  const size = `${Math.round(inspection.sizeBytes / MB)} MB`;
  if (inspection.problems.length) {
    checks.push(fail('database', `${dbFile} (${size}) fails PRAGMA quick_check: ${inspection.problems.slice(0, 3).join('; ')}`, 'stop the daemon and `gateway restore` the newest good backup (the damaged file is kept aside)'));
  } else if (inspection.version > LATEST_SCHEMA_VERSION) {
    checks.push(fail('database', `${dbFile} has schema version ${inspection.version}, newer than this build (${LATEST_SCHEMA_VERSION})`, 'run the gateway version that wrote it, or restore a backup taken before the upgrade'));
  } else {
    checks.push(ok('database', `${dbFile}: ${size}, integrity ok, schema version ${inspection.version}${inspection.version < LATEST_SCHEMA_VERSION ? ` (the daemon migrates it to ${LATEST_SCHEMA_VERSION} on start)` : ''}`));
  }
  const wal = `${Math.round(inspection.walBytes / MB)} MB`;
  checks.push(
    inspection.walBytes > 512 * MB
      ? warn('wal', `the write-ahead log is ${wal}`, 'something holds a long read open (a stuck backup or an outside reader): end it, or restart the daemon so SQLite checkpoints the log')
      : ok('wal', `the write-ahead log is ${wal}`),
  );
  return checks;
}

async function daemonChecks(globals: GlobalOptions, t: DoctorThresholds, store: GatewayConfig['store']['kind']): Promise<Check[]> {
  const client = createClient(globals);
  let status: OperationsStatus;
  try {
    await client.request('GET', '/api/health');
    status = await client.request<OperationsStatus>('GET', '/api/admin/status');
  } catch (err) {
    return [fail('daemon', (err as Error).message, 'start it (`gateway serve`, `systemctl start session-gateway`), and check --url / GATEWAY_URL and the master key')];
  }
  const checks: Check[] = [ok('daemon', `gateway ${status.version} answers at ${client.baseUrl}, up ${formatSeconds(status.uptimeSeconds)}`)];

  const states = Object.entries(status.sessions.byStatus).map(([state, n]) => `${n} ${state}`).join(', ');
  const stuck = status.sessions.attention.filter((s) => s.status === 'DISCONNECTED' || age(s.since) >= t.stuckAfterSeconds);
  checks.push(
    stuck.length
      ? fail(
          'sessions',
          `${status.sessions.total} sessions (${states}); stuck: ${stuck.map((s) => `${s.name} ${s.status}/${s.statusReason} for ${formatSeconds(age(s.since))}`).join(', ')}`,
          'FAILED or TEMPORARY_BAN: see the daemon log, then `gateway sessions restart NAME` (or logout and pair again); CONNECTING with SCAN_QR: pair it (`gateway sessions pair NAME`) or stop it',
        )
      : ok('sessions', `${status.sessions.total} sessions (${states})`),
  );

  const oldest = status.webhooks.oldestPendingAt ? age(status.webhooks.oldestPendingAt) : 0;
  const backlog = `${status.webhooks.pendingDeliveries} pending deliveries${status.webhooks.oldestPendingAt ? `, the oldest ${formatSeconds(oldest)} old` : ''}`;
  checks.push(
    oldest >= t.backlogAgeSeconds
      ? warn('webhook-backlog', backlog, 'see which webhook holds them (`gateway webhooks deliveries ID --status pending`); a receiver that is down or slow keeps them waiting')
      : ok('webhook-backlog', backlog),
  );
  const failing = status.webhooks.failing.filter((w) => age(w.since) >= t.failingAfterSeconds);
  checks.push(
    failing.length
      ? fail(
          'webhooks-failing',
          failing.map((w) => `webhook ${w.id} (${w.url}) failing for ${formatSeconds(age(w.since))}, ${w.deliveries} deliveries, last: ${w.lastStatusCode ?? w.lastError ?? 'no answer'}`).join('; '),
          'fix the receiver (its URL, TLS, signature check), then `gateway webhooks retry ID DELIVERY` the failed deliveries; or disable the webhook',
        )
      : ok('webhooks-failing', status.webhooks.failing.length ? `${status.webhooks.failing.length} webhook(s) failing for less than ${formatSeconds(t.failingAfterSeconds)}` : 'no webhook is failing'),
  );

  if (!status.s3.configured) checks.push(ok('s3', 'no S3 storage is configured'));
  else if (status.s3.reachable) checks.push(ok('s3', 'the S3 storage answers'));
  else checks.push(fail('s3', `the S3 storage does not answer: ${status.s3.error ?? 'unknown error'}`, 'check the endpoint, bucket and credentials (`gateway settings show`, the daemon log has S3\'s own error)'));

  const last = status.backups.last;
  if (store === 'postgres') checks.push(ok('backups', 'PostgreSQL store: back it up with pg_dump (docs/SCALING.md); `gateway backup` and backup.schedule copy a SQLite store only'));
  else if (!last) checks.push(warn('backups', `no backup in <dataDir>/backups (backup.schedule: ${status.backups.schedule})`, 'take one (`gateway backup`) and set backup.schedule (e.g. daily) in gateway.yaml'));
  else checks.push(ok('backups', `${status.backups.count} backup(s); the newest ${formatSeconds(age(last.createdAt))} old (backup.schedule: ${status.backups.schedule})`));
  return checks;
}

/** Node against package.json's engines; Baileys as installed against the version package.json pins (read, not imported). */
function versionChecks(): Check[] {
  const root = new URL('../../../', import.meta.url);
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines?: { node?: string }; dependencies?: Record<string, string> };
  const checks: Check[] = [];
  const wanted = /^>=\s*(\d+)\.(\d+)/.exec(pkg.engines?.node ?? '');
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  if (wanted && (major < Number(wanted[1]) || (major === Number(wanted[1]) && minor < Number(wanted[2])))) {
    checks.push(fail('node', `Node.js ${process.versions.node}; the gateway needs ${pkg.engines!.node}`, `install Node.js ${pkg.engines!.node} (e.g. from NodeSource or nvm)`));
  } else checks.push(ok('node', `Node.js ${process.versions.node} (needs ${pkg.engines?.node ?? 'any'})`));
  const pinned = pkg.dependencies?.['@whiskeysockets/baileys'];
  let installed: string | undefined;
  try {
    const path = createRequire(root).resolve('@whiskeysockets/baileys/package.json');
    installed = (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
  } catch {
    installed = undefined;
  }
  if (!installed) checks.push(fail('baileys', '@whiskeysockets/baileys is not installed', 'run `npm ci` in the gateway directory'));
  else if (pinned && installed !== pinned) checks.push(warn('baileys', `Baileys ${installed} installed, package.json pins ${pinned}`, 'run `npm ci` so the tested version is the one running'));
  else checks.push(ok('baileys', `Baileys ${installed}`));
  return checks;
}
