// `gateway audit`: the audit log of admin actions (GET /api/admin/audit), newest first, filtered and paged.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { createClient, type GlobalOptions } from '../client.js';
import { printJson, printTable, printText } from '../output.js';
import { AUDIT_ACTIONS } from '../../audit/actions.js';
import type { AuditEntryView as AuditEntry } from '../../audit/log.js';

interface AuditFlags {
  action?: string;
  actor?: string;
  target?: string;
  outcome?: string;
  since?: string;
  until?: string;
  limit: number;
  offset?: number;
}

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** An instant: ISO 8601 as the API takes it, or a time ago (`30m`, `24h`, `7d`). */
export function parseInstant(value: string, now = Date.now()): string {
  const ago = /^(\d+)([mhd])$/.exec(value.trim());
  if (ago) return new Date(now - Number(ago[1]) * UNIT_MS[ago[2]!]!).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidArgumentError('expected an ISO 8601 time with a zone (2026-01-01T00:00:00Z) or a time ago (30m, 24h, 7d).');
  }
  return value;
}

function parseCount(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`must be a whole number (${min} or more).`);
    return n;
  };
}

const actorText = (actor: AuditEntry['actor']): string =>
  actor.kind === 'master' || actor.kind === 'system' ? actor.kind : `${actor.kind} ${actor.name ?? ''} (${actor.id ?? '?'})`;

export function register(program: Command): void {
  program
    .command('audit')
    .description('show the audit log of admin actions, newest first: who (master key, API key), what, when, request id, outcome')
    .addOption(new Option('--action <action>', 'only this action').choices(AUDIT_ACTIONS))
    .option('--actor <actor>', 'only this actor: master, key, client, system, or an API key id')
    .option('--target <target>', 'only actions on this session name, webhook id or key id')
    .addOption(new Option('--outcome <outcome>', 'only succeeded or failed actions').choices(['succeeded', 'failed']))
    .option('--since <time>', 'from this time: ISO 8601 (2026-01-01T00:00:00Z) or a time ago (30m, 24h, 7d)', (v) => parseInstant(v))
    .option('--until <time>', 'up to this time (same forms as --since)', (v) => parseInstant(v))
    .option('--limit <n>', 'entries to show (1-1000)', parseCount(1), 50)
    .option('--offset <n>', 'entries to skip (the newest first)', parseCount(0))
    .action(async (opts: AuditFlags, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const query = new URLSearchParams();
      for (const name of ['action', 'actor', 'target', 'outcome', 'since', 'until', 'limit', 'offset'] as const) {
        if (opts[name] !== undefined) query.set(name, String(opts[name]));
      }
      const { items, total } = await createClient(globals).list<AuditEntry>(`/api/admin/audit?${query}`);
      if (globals.json) return printJson(items);
      printTable(
        ['time', 'actor', 'action', 'target', 'outcome', 'count', 'request id'],
        items.map((e) => [
          e.lastAt ? `${e.at} … ${e.lastAt}` : e.at,
          actorText(e.actor),
          e.action,
          e.target ?? '',
          e.outcome === 'succeeded' ? 'ok' : `failed: ${e.errorCode ?? e.status}`,
          e.count,
          e.requestId ?? '',
        ]),
      );
      if (total > items.length) printText(`${items.length} of ${total} entries (--limit, --offset for more)\n`);
    });
}
