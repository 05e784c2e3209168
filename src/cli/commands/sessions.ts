// `gateway sessions …`: list, show, create, start, stop, restart, logout, calls, queue, delete, move and pair sessions over /api/sessions.
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CliError, createClient, type DaemonClient, type GlobalOptions } from '../client.js';
import { ExitCode } from '../exit-codes.js';
import { printJson, printRecord, printTable, printText } from '../output.js';

/** The daemon's session view (src/sessions/view.ts), as JSON. */
export interface Session {
  name: string;
  engine: string;
  status: 'CONNECTING' | 'CONNECTED' | 'DISCONNECTED';
  statusReason: string | null;
  phoneNumber?: string;
  pushName?: string;
  businessName?: string;
  platform?: string;
  lid?: string;
  proxy?: string;
  config: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** A send waiting in a session's queue (GET /api/sessions/{session}/queue). */
interface QueuedSend {
  id: string;
  position: number;
  messageId: string;
  chatId: string;
  type: string;
  firstContact: boolean;
  commandId: string | null;
  queuedAt: string;
}

interface Done {
  success: boolean;
  message: string;
}

const POLL_MS = 1000;

export const sessionPath = (name: string, rest = '') => `/api/sessions/${encodeURIComponent(name)}${rest}`;

function context(command: Command): { globals: GlobalOptions; client: DaemonClient } {
  const globals = command.optsWithGlobals<GlobalOptions>();
  return { globals, client: createClient(globals) };
}

export function register(program: Command): void {
  const sessions = program.command('sessions').description('manage sessions (one WhatsApp account each)');

  sessions
    .command('list')
    .description(`list sessions, ${MAX_PAGE.toLocaleString('en-US')} at most a page (a line on stderr says when more follow)`)
    .option('--limit <n>', `sessions a page (1-${MAX_PAGE})`, integerIn(1, MAX_PAGE, 'the page size'))
    .option('--offset <n>', 'skip this many sessions first (the next page starts where the line on stderr says)', integerIn(0, 1_000_000_000, 'the offset'))
    .action(async (opts: { limit?: number; offset?: number }, command: Command) => {
      const { globals, client } = context(command);
      const query = new URLSearchParams();
      if (opts.limit !== undefined) query.set('limit', String(opts.limit));
      if (opts.offset !== undefined) query.set('offset', String(opts.offset));
      const { items: rows, total } = await client.list<Session>(`/api/sessions${query.size ? `?${query}` : ''}`);
      if (globals.json) printJson(rows);
      else {
        printTable(
          ['name', 'engine', 'status', 'reason', 'phone', 'push name'],
          rows.map((s) => [s.name, s.engine, s.status, s.statusReason, s.phoneNumber, s.pushName]),
        );
      }
      const footer = pageFooter(rows.length, total, opts);
      if (footer) printText(footer, process.stderr);
    });

  sessions
    .command('show')
    .description('show one session')
    .argument('<name>', 'session name')
    .action(async (name: string, _opts: unknown, command: Command) => {
      const { globals, client } = context(command);
      const session = await client.request<Session>('GET', sessionPath(name));
      if (globals.json) return printJson(session);
      printRecord(session as unknown as Record<string, unknown>);
    });

  sessions
    .command('create')
    .description('create a session')
    .argument('<name>', 'session name')
    .addOption(new Option('--engine <engine>', 'engine (default: the daemon\'s engine.default)').choices(['baileys', 'sandbox']))
    .option('--proxy <url>', 'proxy for the connection (http://, https://, socks5://)')
    .option('--start', 'start it at once (then pair it with `gateway sessions pair`)')
    .option('--safe-mode', 'create it in safe mode')
    .action(async (name: string, opts: { engine?: string; proxy?: string; start?: boolean; safeMode?: boolean }, command: Command) => {
      const { globals, client } = context(command);
      const body: Record<string, unknown> = { name };
      if (opts.engine) body.engine = opts.engine;
      if (opts.proxy) body.proxy = opts.proxy;
      if (opts.start) body.start = true;
      if (opts.safeMode) body.config = { safeMode: true };
      const session = await client.request<Session>('POST', '/api/sessions', body);
      if (globals.json) return printJson(session);
      printText(
        `created session ${session.name} (engine ${session.engine}, ${describeStatus(session)})\n` +
          `next: gateway sessions pair ${session.name}   (QR code; --code +PHONE for a pairing code)\n`,
      );
    });

  for (const [verb, description] of [
    ['start', 'start a session (connects, or waits for pairing)'],
    ['stop', 'stop a session, keeping its credentials'],
    ['restart', 'stop then start a session'],
    ['logout', 'unlink the device and clear its credentials (the session is kept; start re-pairs)'],
  ] as const) {
    sessions
      .command(verb)
      .description(description)
      .argument('<name>', 'session name')
      .action(async (name: string, _opts: unknown, command: Command) => {
        const { globals, client } = context(command);
        const result = await client.request<Done>('POST', sessionPath(name, `/${verb}`), {});
        if (globals.json) return printJson(result);
        printText(`${result.message}\n`);
      });
  }

  sessions
    .command('calls')
    .description("set what a session does with incoming calls (its config.calls): --reject rejects every call at once, --reply TEXT also answers the caller; --allow lets calls ring again")
    .argument('<name>', 'session name')
    .option('--reject', 'reject every incoming call at once')
    .option('--reply <text>', 'with --reject: the text message the caller gets after the reject')
    .option('--allow', 'let calls ring again (removes the call policy)')
    .action(async (name: string, opts: { reject?: boolean; reply?: string; allow?: boolean }, command: Command) => {
      const { globals, client } = context(command);
      if (opts.reject === opts.allow) throw new CliError('give exactly one of --reject and --allow', ExitCode.Usage);
      if (opts.reply !== undefined && !opts.reject) throw new CliError('--reply goes with --reject', ExitCode.Usage);
      const calls = opts.allow ? null : { reject: true, ...(opts.reply !== undefined ? { replyText: opts.reply } : {}) };
      const session = await client.request<Session>('PATCH', sessionPath(name), { config: { calls } });
      if (globals.json) return printJson(session);
      printText(opts.allow ? `session ${session.name}: calls ring again\n` : `session ${session.name}: every incoming call is rejected${opts.reply !== undefined ? ', and the caller gets the reply' : ''}\n`);
    });

  sessions
    .command('queue')
    .description("list the sends waiting in a session's queue for their turn (the send governor), next first; --cancel ID takes one out")
    .argument('<name>', 'session name')
    .option('--cancel <id>', 'cancel this queued send (its id from the list)')
    .action(async (name: string, opts: { cancel?: string }, command: Command) => {
      const { globals, client } = context(command);
      if (opts.cancel !== undefined) {
        const done = await client.request<Done>('DELETE', sessionPath(name, `/queue/${encodeURIComponent(opts.cancel)}`));
        if (globals.json) return printJson(done);
        return printText(`${done.message}\n`);
      }
      const { items: entries, total } = await client.list<QueuedSend>(sessionPath(name, '/queue?limit=1000'));
      if (globals.json) return printJson(entries);
      printTable(
        ['#', 'id', 'message id', 'chat', 'type', 'first contact', 'queued at'],
        entries.map((e) => [e.position, e.id, e.messageId, e.chatId, e.type, e.firstContact, e.queuedAt]),
      );
      if (total > entries.length) printText(`${total - entries.length} more queued\n`, process.stderr);
    });

  sessions
    .command('delete')
    .description('delete a session and all its data (asks first unless --yes)')
    .argument('<name>', 'session name')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (name: string, opts: { yes?: boolean }, command: Command) => {
      const { globals, client } = context(command);
      if (!opts.yes) await confirmDelete(name, globals.json === true);
      const result = await client.request<Done>('DELETE', sessionPath(name));
      if (globals.json) return printJson(result);
      printText(`${result.message}\n`);
    });

  sessions
    .command('move')
    .description('move a running session to another node of a cluster (`gateway cluster status` lists them); it reconnects there without pairing')
    .argument('<name>', 'session name')
    .argument('<node>', 'the id of the node to run it')
    .action(async (name: string, node: string, _opts: unknown, command: Command) => {
      const { globals, client } = context(command);
      const result = await client.request<Done>('POST', `/api/cluster/sessions/${encodeURIComponent(name)}/move`, { node });
      if (globals.json) return printJson(result);
      printText(`${result.message}
`);
    });

  sessions
    .command('pair')
    .description('pair a session: draws the QR code (or prints a pairing code with --code) and waits until it connects')
    .argument('<name>', 'session name')
    .option('--code <phone>', 'request an 8-character pairing code for this phone number instead of a QR code')
    .option('--no-wait', 'with --code: print the code and return without waiting for the phone')
    .option('--timeout <seconds>', 'give up after this many seconds', parseSeconds, 180)
    .action(async (name: string, opts: { code?: string; wait: boolean; timeout: number }, command: Command) => {
      const { globals, client } = context(command);
      await pair(client, name, opts, globals.json === true);
    });
}

async function confirmDelete(name: string, json: boolean): Promise<void> {
  if (!process.stdin.isTTY) {
    throw new CliError(`not deleting session ${name} without confirmation: stdin is not a terminal, pass --yes`, ExitCode.Usage);
  }
  let ok: boolean;
  const { confirm } = await import('@inquirer/prompts');
  try {
    ok = await confirm(
      { message: `Delete session ${name} with its messages, media and credentials? The account stays linked until you log out.`, default: false },
      json ? { output: process.stderr } : {},
    );
  } catch (err) {
    if ((err as Error).name === 'ExitPromptError') ok = false;
    else throw err;
  }
  if (!ok) throw new CliError(`cancelled; session ${name} kept`);
}

const MAX_PAGE = 1000;

const count = (n: number): string => n.toLocaleString('en-US');

/** "1,000 of 1,006 shown; next: gateway sessions list --offset 1000" when sessions remain past this page, else nothing. */
export function pageFooter(shown: number, total: number, page: { limit?: number; offset?: number }): string | undefined {
  const offset = page.offset ?? 0;
  const next = offset + shown;
  if (shown === 0 || next >= total) return undefined;
  const from = offset > 0 ? ` (from #${count(offset + 1)})` : '';
  const limit = page.limit !== undefined ? ` --limit ${page.limit}` : '';
  return `${count(shown)} of ${count(total)} shown${from}; next: gateway sessions list --offset ${next}${limit}\n`;
}

function integerIn(min: number, max: number, what: string): (value: string) => number {
  return (value) => {
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${what} must be a whole number from ${min} to ${count(max)}.`);
    return n;
  };
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('must be a positive number of seconds.');
  return seconds;
}

function describeStatus(session: Session): string {
  return session.statusReason ? `${session.status}, ${session.statusReason}` : session.status;
}

export function pairedLine(session: Session): string {
  const who = session.pushName ? ` (${session.pushName})` : '';
  return `session ${session.name} CONNECTED: paired as ${session.phoneNumber ?? 'unknown number'}${who}\n`;
}

/**
 * QR mode: start the session when needed, draw each new QR, wait for CONNECTED.
 * Code mode: request a pairing code, print it, wait for CONNECTED (unless --no-wait).
 * With --json, stdout gets only data (the code, or the connected session) and everything for people goes to stderr.
 */
async function pair(client: DaemonClient, name: string, opts: { code?: string; wait: boolean; timeout: number }, json: boolean): Promise<void> {
  const human = json ? process.stderr : process.stdout;
  const deadline = Date.now() + opts.timeout * 1000;
  let session = await client.request<Session>('GET', sessionPath(name));
  // no phone scans a sandbox session's QR: `gateway sandbox pair` plays the phone
  const sandbox = session.engine === 'sandbox';
  if (session.status === 'CONNECTED') {
    if (json) printJson(session);
    else printText(pairedLine(session).replace('CONNECTED:', 'is already CONNECTED,'), human);
    return;
  }

  if (opts.code !== undefined) {
    const result = await client.request<{ code: string; phoneNumber: string }>('POST', sessionPath(name, '/pairing/code'), { phoneNumber: opts.code });
    if (json) printJson(result);
    else {
      printText(`pairing code for ${result.phoneNumber}: ${formatCode(result.code)}\n`, human);
      if (sandbox) printText(`sandbox session: run \`gateway sandbox pair ${name} --code ${formatCode(result.code)}\` to simulate entering the code\n`, human);
      else printText('on the phone: WhatsApp > Linked devices > Link a device > Link with phone number instead, then enter the code\n', human);
    }
    if (!opts.wait) return;
    printText(`waiting up to ${opts.timeout} s for session ${name} to connect…\n`, human);
  } else if (session.status === 'DISCONNECTED') {
    await client.request<Done>('POST', sessionPath(name, '/start'), {});
  }

  const instruction = sandbox
    ? `sandbox session: run \`gateway sandbox pair ${name}\` to simulate the scan`
    : 'scan with WhatsApp > Linked devices > Link a device';
  const drawer = opts.code === undefined ? qrDrawer(human, instruction) : undefined;
  for (;;) {
    session = await client.request<Session>('GET', sessionPath(name));
    if (session.status === 'CONNECTED') {
      drawer?.finish();
      if (json && opts.code === undefined) printJson(session);
      else printText(pairedLine(session), human);
      return;
    }
    if (session.status === 'DISCONNECTED') {
      drawer?.finish();
      throw new CliError(`session ${name} DISCONNECTED (${session.statusReason ?? 'no reason given'}) before it was paired`);
    }
    if (drawer) await drawer.poll(client, name);
    const left = deadline - Date.now();
    if (left <= 0) {
      drawer?.finish();
      throw new CliError(`session ${name} was not paired within ${opts.timeout} s (status ${describeStatus(session)})`);
    }
    await sleep(Math.min(POLL_MS, left));
  }
}

/** "ABCD1234" → "ABCD-1234". */
export function formatCode(code: string): string {
  const bare = code.replace(/-/g, '').toUpperCase();
  return bare.length === 8 ? `${bare.slice(0, 4)}-${bare.slice(4)}` : bare;
}

/** Draws the session's QR whenever it changes; on a terminal the new drawing replaces the old one. */
function qrDrawer(out: NodeJS.WriteStream, instruction: string) {
  let last: string | undefined;
  let drawnLines = 0;
  return {
    async poll(client: DaemonClient, name: string): Promise<void> {
      let current: { qr: string; expiresAt: string };
      try {
        current = await client.request<{ qr: string; expiresAt: string }>('GET', sessionPath(name, '/pairing/qr'));
      } catch (err) {
        // between QR codes, just connected, or not started yet: the status check of the next round decides
        if (err instanceof CliError && /^(QR_NOT_AVAILABLE|SESSION_ALREADY_PAIRED|SESSION_NOT_STARTED):/.test(err.message)) return;
        throw err;
      }
      if (current.qr === last) return;
      last = current.qr;
      const { default: qrcode } = await import('qrcode-terminal');
      const art = await new Promise<string>((done) => qrcode.generate(current.qr, { small: true }, done));
      const expires = new Date(current.expiresAt).toLocaleTimeString();
      const text = `${art.replace(/\n+$/, '')}\n${instruction} (this code expires at ${expires}; a new one follows)\n`;
      if (out.isTTY && drawnLines > 0) out.write(`\x1b[${drawnLines}A\x1b[0J`);
      printText(text, out);
      drawnLines = text.split('\n').length - 1;
    },
    finish(): void {
      drawnLines = 0;
    },
  };
}
