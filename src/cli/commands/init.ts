// `gateway init`: asks for the basic settings (or takes the defaults) and writes gateway.yaml, mode 0600, with a new
// master key and a separate encryption key: the key that opens the API is then not also the root of the data's encryption.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { generateEncryptionKey } from '../../auth/secret-box.js';
import { DEFAULT_CONFIG } from '../../config/defaults.js';
import { loadConfig, yaml } from '../../config/load.js';
import type { EngineName } from '../../engine/types.js';
import { CliError, type GlobalOptions } from '../client.js';
import { ExitCode } from '../exit-codes.js';
import { printJson, printText } from '../output.js';

interface InitOptions {
  yes?: boolean;
  force?: boolean;
  path?: string;
}

export interface InitAnswers {
  host: string;
  port: number;
  dataDir: string;
  engine: EngineName;
}

export function register(program: Command): void {
  program
    .command('init')
    .description('write gateway.yaml with a new master key and encryption key (asks for the basics; --yes takes the defaults)')
    .option('-y, --yes', 'take the defaults without asking (also when stdin is not a terminal)')
    .option('-f, --force', 'overwrite an existing file')
    .option('--path <file>', 'where to write (default: --config, GATEWAY_CONFIG, ./gateway.yaml)')
    .action(async (opts: InitOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const path = resolve(opts.path ?? globals.config ?? process.env.GATEWAY_CONFIG ?? 'gateway.yaml');
      if (existsSync(path) && !opts.force) {
        throw new CliError(`${path} already exists; pass --force to overwrite it (the old master key will stop working)`, ExitCode.Config);
      }
      const interactive = !opts.yes && process.stdin.isTTY === true;
      const answers = interactive ? await ask(globals.json === true) : defaults();
      const masterKey = generateMasterKey();
      writeConfig(path, renderConfig(answers, masterKey, generateEncryptionKey()), opts.force === true);
      try {
        loadConfig({ configPath: path, env: {} });
      } catch (err) {
        throw new CliError(`wrote ${path} but it does not load: ${(err as Error).message}`, ExitCode.Config);
      }
      if (globals.json) {
        printJson({ path, masterKey });
        return;
      }
      if (!isLoopback(answers.host)) {
        printText(`warning: host ${answers.host} exposes the API beyond this machine; put it behind TLS (a reverse proxy) and a firewall\n`, process.stderr);
      }
      const shown = relative(process.cwd(), path) || path;
      const configFlag = path === resolve('gateway.yaml') ? '' : ` --config ${shown.includes(' ') ? JSON.stringify(shown) : shown}`;
      printText(
        `wrote ${path} (mode 0600) with a new master key (auth.masterKey) and encryption key (auth.encryptionKey); keep it private\n` +
          'keep a copy of auth.encryptionKey apart from the backups: the stored secrets open with it alone\n' +
          `next: gateway${configFlag} serve   (listens on http://${answers.host.includes(':') ? `[${answers.host}]` : answers.host}:${answers.port}, default engine ${answers.engine})\n`,
      );
    });
}

/** `svc_master_` + 32 random bytes, base64url (54 characters after the prefix). */
export function generateMasterKey(): string {
  return `svc_master_${randomBytes(32).toString('base64url')}`;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function defaults(): InitAnswers {
  return { host: DEFAULT_CONFIG.host, port: DEFAULT_CONFIG.port, dataDir: DEFAULT_CONFIG.dataDir, engine: DEFAULT_CONFIG.engine.default };
}

async function ask(promptsOnStderr: boolean): Promise<InitAnswers> {
  const base = defaults();
  // with --json the prompts go to stderr so stdout stays parseable
  const context = promptsOnStderr ? { output: process.stderr } : {};
  // loaded only when asking: it is the slowest import of the CLI
  const { input, select } = await import('@inquirer/prompts');
  try {
    const host = await input(
      { message: 'Listen address', default: base.host, validate: (v) => (v.trim() ? true : 'enter a host or IP address') },
      context,
    );
    const port = await input(
      {
        message: 'Listen port',
        default: String(base.port),
        validate: (v) => (/^\d+$/.test(v.trim()) && Number(v) <= 65535 ? true : 'enter a port from 0 to 65535'),
      },
      context,
    );
    const dataDir = await input(
      { message: 'Data directory (SQLite database and media)', default: base.dataDir, validate: (v) => (v.trim() ? true : 'enter a directory') },
      context,
    );
    const engine = await select<EngineName>(
      {
        message: 'Engine of new sessions',
        default: base.engine,
        choices: [
          { name: 'baileys: the real WhatsApp network', value: 'baileys', short: 'baileys' },
          { name: 'sandbox: a simulated network for testing, no phone needed', value: 'sandbox', short: 'sandbox' },
        ],
      },
      context,
    );
    return { host: host.trim(), port: Number(port.trim()), dataDir: dataDir.trim(), engine };
  } catch (err) {
    if ((err as Error).name === 'ExitPromptError' || (err as Error).name === 'AbortPromptError') {
      throw new CliError('cancelled; nothing written');
    }
    throw err;
  }
}

export function renderConfig(answers: InitAnswers, masterKey: string, encryptionKey: string): string {
  const doc = new (yaml().Document)({
    host: answers.host,
    port: answers.port,
    dataDir: answers.dataDir,
    engine: { default: answers.engine },
    auth: { masterKey, encryptionKey },
  });
  doc.commentBefore = [
    ` gateway.yaml: written by \`gateway init\` on ${new Date().toISOString()}`,
    ' This file holds the master key and the encryption key: keep it private (mode 0600).',
    ' GATEWAY_* environment variables override these settings; gateway.example.yaml lists every setting.',
  ].join('\n');
  const comments: Record<string, string> = {
    host: ' listen address (GATEWAY_HOST); 127.0.0.1 keeps the API off the network',
    port: ' listen port (GATEWAY_PORT)',
    dataDir: ' SQLite database and media blobs; a relative path is relative to this file (GATEWAY_DATA_DIR)',
    engine: ' engine of new sessions: baileys (real network) or sandbox (simulated) (GATEWAY_DEFAULT_ENGINE)',
    auth: ' the master key may call every route; the CLI reads it from here (GATEWAY_MASTER_KEY overrides)',
  };
  const map = doc.contents as unknown as { items: Array<{ key: { value: string; commentBefore?: string } }> };
  for (const pair of map.items) {
    const comment = comments[pair.key.value];
    if (comment) pair.key.commentBefore = comment;
  }
  const auth = doc.get('auth', true) as unknown as { items: Array<{ key: { value: string; commentBefore?: string } }> };
  const encryption = auth.items.find((pair) => pair.key.value === 'encryptionKey');
  encryption!.key.commentBefore =
    ' seals the secrets stored in the database (GATEWAY_ENCRYPTION_KEY overrides); without it they cannot be opened:\n' +
    ' keep a copy apart from the backups. rotate-master-key leaves it (and the database) as it is.';
  return doc.toString();
}

function writeConfig(path: string, text: string, force: boolean): void {
  mkdirSync(dirname(path), { recursive: true });
  try {
    writeFileSync(path, text, { mode: 0o600, flag: force ? 'w' : 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new CliError(`${path} already exists; pass --force to overwrite it`, ExitCode.Config);
    }
    throw new CliError(`cannot write ${path}: ${(err as Error).message}`, ExitCode.Config);
  }
  // an overwritten file keeps its old mode otherwise
  chmodSync(path, 0o600);
}
