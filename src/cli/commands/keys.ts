// `gateway keys …`: list, create, exempt from the send governor and revoke API keys over /api/admin/keys (master key).
import { InvalidArgumentError, type Command } from 'commander';
import { createClient, type GlobalOptions } from '../client.js';
import { printJson, printTable, printText } from '../output.js';

/** The daemon's key view (src/auth/api-keys.ts), as JSON; `key` only in the reply to create. */
interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  sessions: string[] | null;
  rateLimitPerMinute: number | null;
  createdBy: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  key?: string;
}

const SCOPE_LIST = 'sessions:read, sessions:manage, messages:send, chats:manage, contacts:read, media:read, webhooks:manage, keys:manage, audit:read, *';

const splitList = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number (1 or more).');
  return n;
}

export function register(program: Command): void {
  const keys = program.command('keys').description('manage API keys for applications');

  keys
    .command('list')
    .description('list API keys (never the keys themselves)')
    .action(async (_opts: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const rows = await createClient(globals).request<ApiKey[]>('GET', '/api/admin/keys');
      if (globals.json) return printJson(rows);
      printTable(
        ['id', 'name', 'prefix', 'scopes', 'sessions', 'per minute', 'created by', 'created', 'last used'],
        rows.map((k) => [
          k.id,
          k.name,
          `${k.prefix}…`,
          k.scopes.join(','),
          k.sessions ? k.sessions.join(',') : '(all)',
          k.rateLimitPerMinute ?? '(no limit)',
          k.createdBy ?? 'operator',
          k.createdAt,
          k.lastUsedAt ?? 'never',
        ]),
      );
    });

  keys
    .command('create')
    .description('create an API key; the key is printed once')
    .argument('<name>', 'a name to recognise the key by')
    .requiredOption('--scopes <list>', `comma-separated scopes: ${SCOPE_LIST}`, splitList)
    .option('--sessions <list>', 'comma-separated session names the key is limited to (default: all)', splitList)
    .option('--rate-limit <n>', 'requests a minute the key may make (1-100000; default: no limit)', parseLimit)
    .action(async (name: string, opts: { scopes: string[]; sessions?: string[]; rateLimit?: number }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const body: Record<string, unknown> = { name, scopes: opts.scopes };
      if (opts.sessions) body.sessions = opts.sessions;
      if (opts.rateLimit !== undefined) body.rateLimitPerMinute = opts.rateLimit;
      const created = await createClient(globals).request<ApiKey>('POST', '/api/admin/keys', body);
      if (globals.json) return printJson(created);
      printText(
        `created API key ${created.name} (id ${created.id})\n` +
          `scopes:   ${created.scopes.join(', ')}\n` +
          `sessions: ${created.sessions ? created.sessions.join(', ') : 'all'}\n` +
          `limit:    ${created.rateLimitPerMinute === null ? 'none' : `${created.rateLimitPerMinute} requests a minute`}\n\n` +
          `  ${created.key}\n\n` +
          'store it now: it will not be shown again (only its prefix is kept)\n',
      );
    });

  keys
    .command('exempt')
    .description("exempt an API key's sends from the send governor (pace, gaps, caps, queue), or with --off govern them again")
    .argument('<id>', 'key id (see `gateway keys list`)')
    .option('--off', 'govern the key\'s sends again')
    .action(async (id: string, opts: { off?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const updated = await createClient(globals).request<ApiKey>('PATCH', `/api/admin/keys/${encodeURIComponent(id)}`, { governorExempt: !opts.off });
      if (globals.json) return printJson(updated);
      printText(`API key ${updated.name} (id ${updated.id}): ${opts.off ? 'its sends are governed again' : 'its sends skip the send governor'}\n`);
    });

  keys
    .command('revoke')
    .description('revoke an API key; requests with it get 401 from then on')
    .argument('<id>', 'key id (see `gateway keys list`)')
    .action(async (id: string, _opts: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const result = await createClient(globals).request<{ success: boolean; message: string }>('DELETE', `/api/admin/keys/${encodeURIComponent(id)}`, {});
      if (globals.json) return printJson(result);
      printText(`${result.message}\n`);
    });
}
