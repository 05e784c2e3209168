// `gateway groups …`: list, show, create groups of a session and print (or revoke) a group's invite link.
import type { Command } from 'commander';
import { createClient, type DaemonClient, type GlobalOptions } from '../client.js';
import { printJson, printRecord, printTable, printText } from '../output.js';

/** The daemon's group view (src/chats/groups.ts), as JSON. */
interface Participant {
  phoneNumber?: string;
  lid?: string;
  isAdmin: boolean;
  isSuperAdmin: boolean;
}

interface Group {
  id: string;
  name: string;
  description: string;
  ownerLid?: string;
  createdAt: number;
  participants: Participant[];
  results?: Array<{ participant: string; status: string; error?: { code: string; message: string } }>;
}

const groupsPath = (session: string, rest = '') => `/api/sessions/${encodeURIComponent(session)}/groups${rest}`;
const groupPath = (session: string, group: string, rest = '') => groupsPath(session, `/${encodeURIComponent(group)}${rest}`);

function context(command: Command): { globals: GlobalOptions; client: DaemonClient } {
  const globals = command.optsWithGlobals<GlobalOptions>();
  return { globals, client: createClient(globals) };
}

const role = (p: Participant) => (p.isSuperAdmin ? 'creator' : p.isAdmin ? 'admin' : '');
const when = (unix: number) => new Date(unix * 1000).toISOString();

export function register(program: Command): void {
  const groups = program.command('groups').description('groups of a session: list, show, create, invite links');

  groups
    .command('list')
    .description('list the groups a session is in')
    .argument('<session>', 'session name')
    .action(async (session: string, _opts: unknown, command: Command) => {
      const { globals, client } = context(command);
      const rows = await client.request<Group[]>('GET', groupsPath(session));
      if (globals.json) return printJson(rows);
      printTable(
        ['id', 'name', 'members', 'created'],
        rows.map((g) => [g.id, g.name, g.participants.length, when(g.createdAt)]),
      );
    });

  groups
    .command('show')
    .description('show a group with its participants')
    .argument('<session>', 'session name')
    .argument('<group>', 'group JID (…@g.us)')
    .action(async (session: string, group: string, _opts: unknown, command: Command) => {
      const { globals, client } = context(command);
      const g = await client.request<Group>('GET', groupPath(session, group));
      if (globals.json) return printJson(g);
      const { participants, ...rest } = g;
      printRecord({ ...rest, createdAt: when(g.createdAt), members: participants.length });
      printText('\n');
      printTable(['phone number', 'lid', 'role'], participants.map((p) => [p.phoneNumber, p.lid, role(p)]));
    });

  groups
    .command('create')
    .description('create a group; the session becomes its creator (super admin)')
    .argument('<session>', 'session name')
    .argument('<name>', 'group name (at most 25 characters)')
    .argument('[participants...]', 'phone numbers (E.164) or JIDs to add (at most 256)')
    .action(async (session: string, name: string, participants: string[], _opts: unknown, command: Command) => {
      const { globals, client } = context(command);
      const g = await client.request<Group>('POST', groupsPath(session), { session, name, participants });
      if (globals.json) return printJson(g);
      printText(`created group ${g.name} (${g.id}) with ${g.participants.length} members\n`);
      const failed = (g.results ?? []).filter((r) => r.status === 'failed');
      for (const r of failed) printText(`  not added: ${r.participant}: ${r.error?.code ?? 'FAILED'} (${r.error?.message ?? ''})\n`);
    });

  groups
    .command('invite')
    .description('print the invite link of a group (admins); --revoke replaces it, so the old link stops working')
    .argument('<session>', 'session name')
    .argument('<group>', 'group JID (…@g.us)')
    .option('--revoke', 'revoke the current link and print the new one')
    .action(async (session: string, group: string, opts: { revoke?: boolean }, command: Command) => {
      const { globals, client } = context(command);
      const invite = await client.request<{ code: string; url: string }>(opts.revoke ? 'DELETE' : 'GET', groupPath(session, group, '/invite'));
      if (globals.json) return printJson(invite);
      printText(`${opts.revoke ? 'new invite link' : 'invite link'}: ${invite.url}\ncode: ${invite.code}\n`);
    });
}
