// `gateway rotate-master-key`: on a stopped daemon, replaces the master key and re-seals every stored secret under the
// data key derived from the new one, in one transaction (sessions keep their credentials: nothing is paired again).
import { closeSync, constants, existsSync, fchmodSync, fchownSync, fstatSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { secretBoxFor, SecretBoxError } from '../../auth/secret-box.js';
import { resolveConfigPath, yaml } from '../../config/load.js';
import { openDatabase } from '../../store/db.js';
import { checkSealedKey, compactAfterRewrite, resealAll, type SealCounts } from '../../store/sealed-columns.js';
import { asOwner, ownerToWriteAs } from '../as-owner.js';
import { CliError, loadCliConfig, type GlobalOptions } from '../client.js';
import { refuseIfRunning } from '../daemon-probe.js';
import { ExitCode } from '../exit-codes.js';
import { printJson, printText } from '../output.js';
import { generateMasterKey } from './init.js';

interface RotateOptions {
  newKey?: string;
}

type KeySource = 'flag' | 'env' | 'file';

export function register(program: Command): void {
  program
    .command('rotate-master-key')
    .description('replace the master key and re-seal the stored secrets under it (run with the daemon stopped; no session is paired again)')
    .option('--new-key <key>', 'the new master key (at least 32 characters); a new one is generated without it')
    .action(async (opts: RotateOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const config = loadCliConfig(globals);
      const currentKey = globals.masterKey ?? config.auth.masterKey;
      if (!currentKey) throw new CliError('no current master key: set GATEWAY_MASTER_KEY, auth.masterKey or --master-key', ExitCode.Config);
      const source: KeySource = globals.masterKey ? 'flag' : process.env.GATEWAY_MASTER_KEY ? 'env' : 'file';
      const configPath = resolveConfigPath({ configPath: globals.config });
      const newKey = opts.newKey ?? generateMasterKey();
      if (newKey.length < 32) throw new CliError('--new-key must be at least 32 characters', ExitCode.Usage);
      if (newKey === currentKey) throw new CliError('--new-key is the current master key', ExitCode.Usage);

      // the daemon holds the database open and caches what it read: rotating under it would be undone by its next write
      await refuseIfRunning(globals, config, 'rotate-master-key', 'rewrites the database it holds open');

      const encryptionKey = config.auth.encryptionKey;
      let from, to;
      try {
        from = secretBoxFor({ masterKey: currentKey, encryptionKey });
        to = secretBoxFor({ masterKey: newKey, encryptionKey });
      } catch (err) {
        if (err instanceof SecretBoxError) throw new CliError(err.message, ExitCode.Config);
        throw err;
      }

      const file = join(resolve(config.dataDir), 'gateway.db');
      // the new gateway.yaml is written beside the old one first, and takes its place only once the database is re-sealed
      const staged = source === 'file' && configPath ? stageConfig(configPath, newKey) : undefined;
      let resealed: SealCounts = {};
      try {
        // SQLite's -wal and -shm are made in the daemon's directory: as its owner when root runs this (see as-owner.ts)
        if (existsSync(file)) resealed = await asOwner(ownerToWriteAs(dirname(file)), () => reseal(file, from, to, encryptionKey !== undefined));
      } catch (err) {
        if (staged) rmSync(staged.path, { force: true });
        throw err;
      }
      if (staged) {
        try {
          renameSync(staged.path, configPath!);
        } catch (err) {
          // the database is sealed under the new key already: the key must not be lost with the file
          throw new CliError(
            `the secrets are re-sealed under the new master key, but ${configPath} could not be replaced (${(err as Error).message}); ` +
              `the new key is in ${staged.path} and here, once: ${newKey}`,
            ExitCode.Failure,
          );
        }
      }

      const total = Object.values(resealed).reduce((sum, n) => sum + n, 0);
      if (globals.json) {
        printJson({
          ...(staged ? { configPath } : { masterKey: newKey }),
          keyId: to.keyId,
          resealed,
          dataKeyChanged: encryptionKey === undefined,
        });
        return;
      }
      const what = encryptionKey
        ? 'the data key comes from GATEWAY_ENCRYPTION_KEY (auth.encryptionKey) and did not change: no value was re-sealed'
        : `re-sealed ${total} stored secret(s) in ${file} under data key ${to.keyId}`;
      if (staged) {
        printText(`${what}\nwrote the new master key into ${configPath} (mode ${staged.mode.toString(8).padStart(4, '0')}); start the daemon again\n`);
      } else {
        const name = source === 'env' ? 'GATEWAY_MASTER_KEY' : 'the master key (--master-key)';
        printText(
          `${what}\nthe new master key, shown once: set ${name} to it before starting the daemon; the old one no longer works\n${newKey}\n`,
        );
      }
    });
}

/** Checks that the current key opens the database, then re-seals every value in one transaction; touches nothing when the key is wrong. */
async function reseal(file: string, from: ReturnType<typeof secretBoxFor>, to: ReturnType<typeof secretBoxFor>, sameDataKey: boolean): Promise<SealCounts> {
  const db = openDatabase(file);
  try {
    const mismatch = await checkSealedKey(db, from);
    if (mismatch) {
      throw new CliError(
        `the current ${sameDataKey ? 'encryption key (GATEWAY_ENCRYPTION_KEY)' : 'master key'} does not open the secrets in ${file} ` +
          `(sealed under data key ${mismatch.storedKeyId}, this key gives ${from.keyId}); nothing was changed`,
        ExitCode.Config,
      );
    }
    if (sameDataKey) return {};
    let counts: SealCounts;
    try {
      counts = await resealAll(db, from, to);
    } catch (err) {
      if (err instanceof SecretBoxError) throw new CliError(`a stored value does not open with the current key (${err.message}); nothing was changed`, ExitCode.Config);
      throw err;
    }
    compactAfterRewrite(db);
    return counts;
  } finally {
    await db.close();
  }
}

/**
 * Writes gateway.yaml with the new master key to a temporary file beside it, comments kept; returns its path. The file
 * is new (O_EXCL, never a symlink followed: the directory may be the service user's) and gets the owner, group and mode
 * of the one it replaces through its descriptor (run with sudo, the service's user must still read it).
 */
function stageConfig(path: string, newKey: string): { path: string; mode: number } {
  const original = statSync(path);
  const doc = yaml().parseDocument(readFileSync(path, 'utf8'));
  doc.setIn(['auth', 'masterKey'], newKey);
  const staged = `${path}.rotate-${process.pid}.tmp`;
  rmSync(staged, { force: true });
  const fd = openSync(staged, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeFileSync(fd, doc.toString());
    if (process.getuid?.() === 0) fchownSync(fd, original.uid, original.gid);
    // the group's and others' bits only for the same group (a user other than root cannot give the file away)
    const mode = original.mode & (fstatSync(fd).gid === original.gid ? 0o666 : 0o600);
    fchmodSync(fd, mode);
    return { path: staged, mode };
  } catch (err) {
    rmSync(staged, { force: true });
    throw err;
  } finally {
    closeSync(fd);
  }
}
