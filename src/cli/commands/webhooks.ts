// `gateway webhooks …`: list, show, create, update, delete webhooks and read or retry their deliveries over /api/webhooks.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CliError, createClient, type DaemonClient, type GlobalOptions } from '../client.js';
import { ExitCode } from '../exit-codes.js';
import { printJson, printRecord, printTable, printText } from '../output.js';

/** The daemon's webhook view (src/webhooks/registry.ts), as JSON; `hmacKey` only in the reply to create. */
interface Webhook {
  id: number;
  url: string;
  events: string[];
  session: string | null;
  enabled: boolean;
  headers: Array<{ name: string; value: string }>;
  retries: { attempts: number; delaySeconds: number; policy: string };
  signatureScheme: string;
  createdAt: string;
  updatedAt: string;
  hmacKey?: string;
}

interface Delivery {
  id: string;
  eventId: string;
  event: string;
  session: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Done {
  success: boolean;
  message: string;
}

interface WebhookFlags {
  events?: string[];
  session?: string;
  header?: Array<{ name: string; value: string }>;
  attempts?: number;
  delay?: number;
  policy?: string;
  hmacKey?: string;
  signatureScheme?: string;
  enable?: boolean;
  disable?: boolean;
  noSession?: boolean;
}

const path = (id: string, rest = '') => `/api/webhooks/${encodeURIComponent(id)}${rest}`;

const splitList = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

function parseHeader(value: string, previous: Array<{ name: string; value: string }> = []): Array<{ name: string; value: string }> {
  const colon = value.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError(`expected 'Name: value', got '${value}'.`);
  return [...previous, { name: value.slice(0, colon).trim(), value: value.slice(colon + 1).trim() }];
}

function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number (0 or more).');
  return n;
}

function context(command: Command): { globals: GlobalOptions; client: DaemonClient } {
  const globals = command.optsWithGlobals<GlobalOptions>();
  return { globals, client: createClient(globals) };
}

/** The flags shared by create and update. */
function withWebhookFlags(command: Command): Command {
  return command
    .option('--events <list>', 'comma-separated event types (default: all; "*" = all)', splitList)
    .option('--session <name>', 'only events of this session (default: all sessions)')
    .option('--header <header>', "custom header 'Name: value' (repeat for more, at most 10)", parseHeader)
    .option('--attempts <n>', 'retries after the first failure (0-20, default 3)', parseCount)
    .option('--delay <seconds>', 'base delay between retries in seconds (0-3600, default 5)', parseCount)
    .addOption(new Option('--policy <policy>', 'retry spacing (default exponential)').choices(['constant', 'linear', 'exponential']))
    .option('--hmac-key <key>', 'signing key, at least 16 characters (default: generated and printed once)')
    .addOption(
      new Option('--signature-scheme <scheme>', 'what the signature covers: body, or timestamp.body (replay-resistant; default body)').choices([
        'body',
        'timestamp.body',
      ]),
    );
}

/** Builds the request body from the flags that were given. */
function bodyOf(opts: WebhookFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (opts.events) body.events = opts.events;
  if (opts.session !== undefined) body.session = opts.session;
  if (opts.noSession) body.session = null;
  if (opts.header) body.headers = opts.header;
  const retries: Record<string, unknown> = {};
  if (opts.attempts !== undefined) retries.attempts = opts.attempts;
  if (opts.delay !== undefined) retries.delaySeconds = opts.delay;
  if (opts.policy !== undefined) retries.policy = opts.policy;
  if (Object.keys(retries).length) body.retries = retries;
  if (opts.hmacKey !== undefined) body.hmacKey = opts.hmacKey;
  if (opts.signatureScheme !== undefined) body.signatureScheme = opts.signatureScheme;
  if (opts.enable) body.enabled = true;
  if (opts.disable) body.enabled = false;
  return body;
}

const describeRetries = (r: Webhook['retries']) => `${r.attempts} × ${r.policy} ${r.delaySeconds}s`;

export function register(program: Command): void {
  const webhooks = program.command('webhooks').description('manage webhooks (signed event delivery) and their delivery log');

  webhooks
    .command('list')
    .description('list webhooks')
    .action(async (_opts: unknown, command: Command) => {
      const { globals, client } = context(command);
      const rows = await client.request<Webhook[]>('GET', '/api/webhooks');
      if (globals.json) return printJson(rows);
      printTable(
        ['id', 'url', 'events', 'session', 'enabled', 'retries'],
        rows.map((w) => [w.id, w.url, w.events.length ? w.events.join(',') : '(all)', w.session ?? '(all)', w.enabled ? 'yes' : 'no', describeRetries(w.retries)]),
      );
    });

  webhooks
    .command('show')
    .description('show one webhook')
    .argument('<id>', 'webhook id')
    .action(async (id: string, _opts: unknown, command: Command) => {
      const { globals, client } = context(command);
      const webhook = await client.request<Webhook>('GET', path(id));
      if (globals.json) return printJson(webhook);
      printRecord(webhook as unknown as Record<string, unknown>);
    });

  withWebhookFlags(webhooks.command('create').description('register a webhook; its signing key is printed once').argument('<url>', 'target URL (https)')).action(
    async (url: string, opts: WebhookFlags, command: Command) => {
      const { globals, client } = context(command);
      const created = await client.request<Webhook>('POST', '/api/webhooks', { url, ...bodyOf(opts) });
      if (globals.json) return printJson(created);
      printText(
        `created webhook ${created.id} → ${created.url}\n` +
          `events:  ${created.events.length ? created.events.join(', ') : 'all'}\n` +
          `session: ${created.session ?? 'all'}\n` +
          `retries: ${describeRetries(created.retries)}\n\n` +
          `  signing key: ${created.hmacKey}\n\n` +
          'store the key now: it will not be shown again (verify X-Webhook-Signature with it)\n',
      );
    },
  );

  withWebhookFlags(webhooks.command('update').description('change a webhook; only the given flags change (--header replaces all headers)').argument('<id>', 'webhook id'))
    .option('--no-session-filter', 'deliver events of every session again')
    .option('--enable', 'resume delivery')
    .option('--disable', 'stop delivery (pending deliveries are marked failed)')
    .action(async (id: string, opts: WebhookFlags & { sessionFilter?: boolean }, command: Command) => {
      const { globals, client } = context(command);
      if (opts.enable && opts.disable) throw new CliError('--enable and --disable exclude each other', ExitCode.Usage);
      const body = bodyOf({ ...opts, noSession: opts.sessionFilter === false });
      if (Object.keys(body).length === 0) throw new CliError('nothing to change: give at least one flag (see --help)', ExitCode.Usage);
      const updated = await client.request<Webhook>('PUT', path(id), body);
      if (globals.json) return printJson(updated);
      printText(`updated webhook ${updated.id}\n`);
      printRecord(updated as unknown as Record<string, unknown>);
    });

  webhooks
    .command('delete')
    .description('delete a webhook (attempts in flight finish; pending deliveries are dropped)')
    .argument('<id>', 'webhook id')
    .action(async (id: string, _opts: unknown, command: Command) => {
      const { globals, client } = context(command);
      const result = await client.request<Done>('DELETE', path(id));
      if (globals.json) return printJson(result);
      printText(`${result.message}\n`);
    });

  webhooks
    .command('deliveries')
    .description('the delivery log of a webhook, newest first')
    .argument('<id>', 'webhook id')
    .addOption(new Option('--status <status>', 'only deliveries in this state').choices(['pending', 'succeeded', 'failed']))
    .option('--limit <n>', 'at most this many rows (1-1000)', parseCount, 50)
    .action(async (id: string, opts: { status?: string; limit: number }, command: Command) => {
      const { globals, client } = context(command);
      const query = new URLSearchParams({ limit: String(opts.limit) });
      if (opts.status) query.set('status', opts.status);
      const rows = await client.request<Delivery[]>('GET', path(id, `/deliveries?${query}`));
      if (globals.json) return printJson(rows);
      printTable(
        ['id', 'event', 'session', 'status', 'attempts', 'last status', 'last error', 'next attempt', 'created'],
        rows.map((d) => [d.id, d.event, d.session, d.status, d.attempts, d.lastStatusCode, d.lastError, d.nextAttemptAt, d.createdAt]),
      );
    });

  webhooks
    .command('retry')
    .description('send a delivery again now, with a fresh retry budget')
    .argument('<id>', 'webhook id')
    .argument('<deliveryId>', 'delivery id (see `gateway webhooks deliveries`)')
    .action(async (id: string, deliveryId: string, _opts: unknown, command: Command) => {
      const { globals, client } = context(command);
      const delivery = await client.request<Delivery>('POST', path(id, `/deliveries/${encodeURIComponent(deliveryId)}/retry`), {});
      if (globals.json) return printJson(delivery);
      printText(`delivery ${delivery.id} re-queued (${delivery.event}, ${delivery.attempts} attempts so far)\n`);
    });
}
