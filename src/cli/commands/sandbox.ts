// `gateway sandbox …`: the sandbox engine's simulated phone, over /api/sandbox (master key). `pair` plays the phone
// that scans a sandbox session's QR code (or enters its pairing code).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { CliError, createClient, type DaemonClient, type GlobalOptions } from '../client.js';
import { printJson, printText } from '../output.js';
import { pairedLine, sessionPath, type Session } from './sessions.js';

/** how long a started session may take to wait for pairing, and a paired one to show CONNECTED */
const SETTLE_MS = 10_000;
const POLL_MS = 100;

interface PairFlags {
  phone?: string;
  pushName?: string;
  business?: boolean;
  businessName?: string;
  code?: string;
}

export function register(program: Command): void {
  const sandbox = program.command('sandbox').description("the sandbox engine's simulated phone (sandbox sessions only)");

  sandbox
    .command('pair')
    .description('simulate the phone scanning the QR code of a sandbox session (starting the session when stopped), or entering its pairing code with --code')
    .argument('<name>', 'session name')
    .option('--phone <number>', "the phone's number (E.164; default: the number a pairing code was requested for, else a made-up +1555…)")
    .option('--push-name <name>', "the account's display name")
    .option('--business', 'a WhatsApp Business account')
    .option('--business-name <name>', 'with --business: the business name')
    .option('--code <code>', 'enter this pairing code (from `gateway sessions pair NAME --code PHONE`) instead of scanning')
    .action(async (name: string, opts: PairFlags, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = createClient(globals);
      const session = await sandboxPair(client, name, opts);
      if (globals.json) printJson(session);
      else printText(pairedLine(session));
    });
}

async function sandboxPair(client: DaemonClient, name: string, opts: PairFlags): Promise<Session> {
  const before = await client.request<Session>('GET', sessionPath(name));
  if (before.engine !== 'sandbox') {
    throw new CliError(`session ${name} runs on the ${before.engine} engine, not the sandbox: pair it with \`gateway sessions pair ${name}\` and a phone`);
  }
  const start = before.status === 'DISCONNECTED' && opts.code === undefined;
  if (start) await client.request('POST', sessionPath(name, '/start'), {});
  const body = {
    ...(opts.phone !== undefined ? { phoneNumber: opts.phone } : {}),
    ...(opts.pushName !== undefined ? { pushName: opts.pushName } : {}),
    ...(opts.business ? { business: true } : {}),
    ...(opts.businessName !== undefined ? { businessName: opts.businessName } : {}),
    ...(opts.code !== undefined ? { code: opts.code } : {}),
  };
  const deadline = Date.now() + SETTLE_MS;
  const pairPath = `/api/sandbox/sessions/${encodeURIComponent(name)}/pair`;
  for (;;) {
    try {
      await client.request('POST', pairPath, body);
      break;
    } catch (err) {
      // a session still starting is not waiting for pairing yet
      const starting = err instanceof CliError && err.message.startsWith('SESSION_NOT_STARTED:') && (start || before.status === 'CONNECTING');
      if (!starting || Date.now() > deadline) throw err;
      await sleep(POLL_MS);
    }
  }
  for (;;) {
    const session = await client.request<Session>('GET', sessionPath(name));
    if (session.status === 'CONNECTED') return session;
    if (Date.now() > deadline) throw new CliError(`session ${name} was paired but is ${session.status} (${session.statusReason ?? 'no reason given'})`);
    await sleep(POLL_MS);
  }
}
