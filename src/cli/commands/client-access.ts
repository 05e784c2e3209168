// `gateway client-rules show|set|delete SESSION` and `gateway client-tokens mint SESSION EPHEMERAL_ID`.
import type { Command } from 'commander';
import { createClient, type GlobalOptions } from '../client.js';
import { printJson, printRecord, printText } from '../output.js';

interface RuleFlags {
  recipientMode: string;
  enabled?: boolean;
  actions?: string;
  ratePerMinute?: string;
  dailyCap?: string;
  origins?: string;
}

export function register(program: Command): void {
  const rules = program.command('client-rules').description('what browser code with a client token may do on a session');

  rules
    .command('show')
    .argument('<session>')
    .description('show the client rules of a session')
    .action(async (session: string, _opts: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const data = await createClient(globals).request<Record<string, unknown>>('GET', `/api/sessions/${encodeURIComponent(session)}/client-rules`);
      if (globals.json) return printJson(data);
      printRecord(data);
    });

  rules
    .command('set')
    .argument('<session>')
    .description('create or replace the client rules of a session')
    .requiredOption('--recipient-mode <mode>', 'none (reads only), conversation (reply only to who wrote first) or any')
    .option('--actions <list>', 'comma-separated: send_message,send_reaction,send_typing,send_seen,read_presence,subscribe_presence,read_contact (default: none)')
    .option('--rate-per-minute <n>', 'requests a minute per ephemeral id (0 = unlimited)')
    .option('--daily-cap <n>', 'messages and reactions a day per ephemeral id (0 = unlimited)')
    .option('--origins <list>', 'comma-separated allowed origins, e.g. https://app.example.com (default: any)')
    .option('--disabled', 'refuse every client-token request for now')
    .action(async (session: string, opts: RuleFlags & { disabled?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const body = {
        recipientMode: opts.recipientMode,
        enabled: !opts.disabled,
        ...(opts.actions !== undefined ? { allowedActions: opts.actions } : {}),
        ...(opts.ratePerMinute !== undefined ? { rateLimitPerMinute: Number(opts.ratePerMinute) } : {}),
        ...(opts.dailyCap !== undefined ? { dailySendCap: Number(opts.dailyCap) } : {}),
        ...(opts.origins !== undefined ? { allowedOrigins: opts.origins } : {}),
      };
      const data = await createClient(globals).request<Record<string, unknown>>('PUT', `/api/sessions/${encodeURIComponent(session)}/client-rules`, body);
      if (globals.json) return printJson(data);
      printRecord(data);
    });

  rules
    .command('delete')
    .argument('<session>')
    .description('remove the client rules; every client token of the session stops working at once')
    .action(async (session: string, _opts: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const data = await createClient(globals).request<{ message: string }>('DELETE', `/api/sessions/${encodeURIComponent(session)}/client-rules`);
      if (globals.json) return printJson(data);
      printText(`${data.message}\n`);
    });

  program
    .command('client-tokens')
    .description('short-lived tokens for browser code')
    .command('mint')
    .argument('<session>')
    .argument('<ephemeralId>', 'your id for the browser user or visitor (rate limits apply per id)')
    .option('--ttl <seconds>', 'lifetime in seconds (default 900)')
    .description('mint a client token')
    .action(async (session: string, ephemeralId: string, opts: { ttl?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const data = await createClient(globals).request<Record<string, unknown>>('POST', '/api/client-tokens', {
        session,
        ephemeralId,
        ...(opts.ttl !== undefined ? { ttlSeconds: Number(opts.ttl) } : {}),
      });
      if (globals.json) return printJson(data);
      printRecord(data);
    });
}
