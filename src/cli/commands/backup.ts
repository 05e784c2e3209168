// `gateway backup [FILE]`: a consistent copy of the running daemon's database (POST /api/admin/backups), downloaded
// into FILE when given. `gateway restore FILE`: on a stopped daemon, checks the copy and puts it in place of gateway.db,
// keeping the replaced database aside.
import { chmodSync, closeSync, constants, createWriteStream, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, writeSync, type Stats } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { secretBoxFor, SecretBoxError } from '../../auth/secret-box.js';
import { noteRestore, type BackupInfo } from '../../ops/backups.js';
import { copyDatabase, inspectDatabase, LATEST_SCHEMA_VERSION } from '../../store/database-file.js';
import { checkSealedKeyOfFile } from '../../store/sealed-columns.js';
import { CliError, createClient, loadCliConfig, type GlobalOptions } from '../client.js';
import { refuseIfRunning } from '../daemon-probe.js';
import { asOwner, asOwnerSync } from '../as-owner.js';
import { ownerOf, type Owner } from '../file-owner.js';
import { ExitCode } from '../exit-codes.js';
import { printJson, printText } from '../output.js';

export function register(program: Command): void {
  program
    .command('backup [file]')
    .description("back the running daemon's database up (online); into <dataDir>/backups, and downloaded into FILE when given")
    .option('--with-media', 'also copy the media blobs (into <backup>-media beside the copy)')
    .action(async (file: string | undefined, opts: { withMedia?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = createClient(globals);
      const backup = await client.request<BackupInfo>('POST', '/api/admin/backups', { withMedia: opts.withMedia ?? false });
      let path = backup.path;
      let media = backup.media?.path;
      if (file) {
        path = resolve(file);
        await download(client, backup.name, path, backup.sizeBytes);
        // the blobs are not sent over HTTP: copied when the daemon's directory is on this host, otherwise left there
        if (backup.media && existsSync(backup.media.path)) media = copyDirectory(backup.media.path, `${path}-media`);
      }
      if (globals.json) {
        printJson({ ...backup, path, media: backup.media && { ...backup.media, path: media } });
        return;
      }
      printText(`backup written: ${path} (${formatBytes(backup.sizeBytes)}, schema version ${backup.schemaVersion}, ${backup.durationMs} ms)\n`);
      if (backup.media) printText(`media: ${backup.media.files} file(s), ${formatBytes(backup.media.sizeBytes)} in ${media}\n`);
      printText('its secrets stay sealed: restoring it needs the same master key (or GATEWAY_ENCRYPTION_KEY)\n');
    });

  program
    .command('restore <file>')
    .description('on a stopped daemon: put a backup in place of gateway.db (checked first; the replaced database is kept aside)')
    .option('--media <dir>', "the backup's media directory (default: FILE-media when it exists)")
    .action(async (file: string, opts: { media?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const config = loadCliConfig(globals);
      const source = resolve(file);
      if (!existsSync(source) || !statSync(source).isFile()) throw new CliError(`no such backup file: ${source}`, ExitCode.Usage);
      const mediaSource = opts.media ? resolve(opts.media) : existsSync(`${source}-media`) ? `${source}-media` : undefined;
      if (mediaSource && !existsSync(mediaSource)) throw new CliError(`no such media directory: ${mediaSource}`, ExitCode.Usage);

      const dataDir = resolve(config.dataDir);
      const owner = restoreOwner(dataDir);
      await refuseIfRunning(globals, config, 'restore', 'replaces the database it holds open');
      const version = await checkBackup(source, globals.masterKey ?? config.auth.masterKey, config.auth.encryptionKey);

      // every write into the data directory is its owner's (root restoring for the daemon's user): see as-owner.ts
      asOwnerSync(owner, () => mkdirSync(dataDir, { recursive: true, mode: 0o700 }));
      const target = join(dataDir, 'gateway.db');
      const staged = `${target}.restoring-${process.pid}`;
      asOwnerSync(owner, () => createPrivateFile(staged));
      try {
        // through SQLite's backup, not a file copy: a -wal beside the source is taken in, and the result is one file
        await copyDatabase(source, staged, (write) => asOwner(owner, write));
      } catch (err) {
        asOwnerSync(owner, () => rmSync(staged, { force: true }));
        throw new CliError(`could not copy ${source}: ${(err as Error).message}; nothing was changed`);
      }
      const stamp = new Date().toISOString().replace(/[-:.]/g, '');
      const replaced = `${target}.replaced-${stamp}`;
      const kept = existsSync(target);
      asOwnerSync(owner, () => {
        if (kept) {
          // the -wal and -shm move with it under the same name, so the kept copy stays a whole database
          renameSync(target, replaced);
          for (const suffix of ['-wal', '-shm']) if (existsSync(`${target}${suffix}`)) renameSync(`${target}${suffix}`, `${replaced}${suffix}`);
        }
        renameSync(staged, target);
        noteRestore(dataDir, { from: basename(source), at: new Date().toISOString(), replaced: kept ? basename(replaced) : null });
      });

      let mediaReplaced: string | undefined;
      if (mediaSource) {
        const mediaDir = join(dataDir, 'media');
        asOwnerSync(owner, () => {
          // lstat: a symlink named media is moved aside too, never followed
          if (lstatOrUndefined(mediaDir)) {
            mediaReplaced = `${mediaDir}.replaced-${stamp}`;
            renameSync(mediaDir, mediaReplaced);
          }
        });
        copyDirectory(mediaSource, mediaDir, owner);
      }

      const result = { restored: target, from: source, schemaVersion: version, latestSchemaVersion: LATEST_SCHEMA_VERSION, replaced: kept ? replaced : null, media: mediaSource ?? null, mediaReplaced: mediaReplaced ?? null };
      if (globals.json) {
        printJson(result);
        return;
      }
      printText(`restored ${source} into ${target}\n`);
      if (kept) printText(`the replaced database is kept as ${replaced}\n`);
      if (mediaSource) printText(`media restored from ${mediaSource}${mediaReplaced ? ` (the replaced media directory is kept as ${mediaReplaced})` : ''}\n`);
      if (version < LATEST_SCHEMA_VERSION) printText(`the daemon migrates it from schema version ${version} to ${LATEST_SCHEMA_VERSION} when it starts\n`);
      printText('start the daemon: sessions come back without pairing and pending webhook deliveries go on\n');
    });
}

/**
 * Whose the restored files must be: the data directory's owner, the user the daemon runs as. Root writes them as that
 * user (a `sudo gateway restore` would otherwise leave a database the daemon cannot open); any other user
 * who is not the owner is refused before anything changes. Undefined: the files are the running user's, as they are.
 */
function restoreOwner(dataDir: string): Owner | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const owner = ownerOf(dataDir);
  if (owner.uid === uid) return undefined;
  if (uid === 0) return owner;
  // a data directory this restore creates is this user's, as the daemon run by the same user would make it
  if (!existsSync(dataDir)) return undefined;
  throw new CliError(
    `${dataDir} belongs to ${owner.name} (uid ${owner.uid}), and this is uid ${uid}: run the restore as ${owner.name} ` +
      `(sudo -u ${owner.name} gateway restore …), or as root, which gives the files to ${owner.name}; nothing was changed`,
  );
}

/** A new empty file, 0600, where nothing may stand: a leftover (or a symlink someone put there) is removed, never followed. */
function createPrivateFile(path: string): void {
  rmSync(path, { force: true });
  closeSync(openSync(path, EXCLUSIVE, 0o600));
}

const EXCLUSIVE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Integrity, schema version and key of a backup, before anything is touched; returns its schema version. */
async function checkBackup(file: string, masterKey: string | undefined, encryptionKey: string | undefined): Promise<number> {
  const inspection = inspectDatabase(file, 'full');
  if (inspection.problems.length) throw new CliError(`${file} failed the integrity check (${inspection.problems.slice(0, 3).join('; ')}); nothing was changed`);
  if (inspection.version === 0) throw new CliError(`${file} is not a gateway database (no schema version); nothing was changed`);
  if (inspection.version > LATEST_SCHEMA_VERSION) {
    throw new CliError(`${file} has schema version ${inspection.version}, newer than this build knows (${LATEST_SCHEMA_VERSION}): restore it with the version that wrote it; nothing was changed`);
  }
  if (!masterKey && !encryptionKey) throw new CliError('no master key: the backup\'s secrets are checked against it (set GATEWAY_MASTER_KEY, auth.masterKey or --master-key)', ExitCode.Config);
  let box;
  try {
    box = secretBoxFor({ masterKey, encryptionKey });
  } catch (err) {
    if (err instanceof SecretBoxError) throw new CliError(err.message, ExitCode.Config);
    throw err;
  }
  const mismatch = await checkSealedKeyOfFile(file, box);
  if (mismatch) {
    throw new CliError(
      `the secrets in ${file} were sealed under data key ${mismatch.storedKeyId}, and this configuration's key gives ${box.keyId}: ` +
        'restore it with the master key (or GATEWAY_ENCRYPTION_KEY) it was written with; nothing was changed',
      ExitCode.Config,
    );
  }
  return inspection.version;
}

async function download(client: ReturnType<typeof createClient>, name: string, path: string, size: number): Promise<void> {
  const response = await client.raw('GET', `/api/admin/backups/${encodeURIComponent(name)}`);
  if (!response.ok || !response.body) throw new CliError(`HTTP ${response.status} downloading backup ${name}`);
  const partial = `${path}.partial-${process.pid}`;
  try {
    await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), createWriteStream(partial, { mode: 0o600 }));
    chmodSync(partial, 0o600);
    const got = statSync(partial).size;
    if (got !== size) throw new CliError(`backup ${name}: received ${got} bytes of ${size}`);
    renameSync(partial, path);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
}

/**
 * Copies the files of one flat directory (media blobs) into a new one, 0700 / 0600; returns the target. With `owner`
 * (root restoring for the daemon's user), each source file is opened as root (a backup may be root's only) and its copy
 * written as the owner.
 */
function copyDirectory(from: string, to: string, owner?: Owner): string {
  asOwnerSync(owner, () => mkdirSync(to, { recursive: true, mode: 0o700 }));
  for (const name of readdirSync(from)) {
    const source = join(from, name);
    if (!statSync(source).isFile()) continue;
    const input = openSync(source, 'r');
    try {
      asOwnerSync(owner, () => {
        // an earlier download's copy is replaced (a symlink in its place is not followed)
        rmSync(join(to, name), { force: true });
        const output = openSync(join(to, name), EXCLUSIVE, 0o600);
        try {
          copyBetween(input, output);
        } finally {
          closeSync(output);
        }
      });
    } finally {
      closeSync(input);
    }
  }
  return to;
}

function copyBetween(input: number, output: number): void {
  const chunk = Buffer.allocUnsafe(1 << 16);
  for (let read; (read = readSync(input, chunk, 0, chunk.length, null)) > 0; ) {
    for (let written = 0; written < read; ) written += writeSync(output, chunk, written, read - written);
  }
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}
