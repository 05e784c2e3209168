// `gateway send SESSION CHAT [TEXT]`: sends a text (or an image/file from disk) so an operator can check a session.
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { CliError, createClient, type GlobalOptions } from '../client.js';
import { ExitCode } from '../exit-codes.js';
import { printJson, printRecord } from '../output.js';

const MAX_FILE_BYTES = 70 * 1024 * 1024;

export function register(program: Command): void {
  program
    .command('send')
    .description('send a message from a session: text, or --image/--file from disk (TEXT becomes the caption)')
    .argument('<session>', 'session name')
    .argument('<chat>', 'phone number (+E.164) or JID')
    .argument('[text]', 'message text, or caption with --image/--file')
    .option('--image <path>', 'send a JPEG, PNG or WebP image')
    .option('--file <path>', 'send any file as a document')
    .action(async (session: string, chat: string, text: string | undefined, opts: { image?: string; file?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      if (opts.image && opts.file) throw new CliError('give --image or --file, not both', ExitCode.Usage);
      const path = opts.image ?? opts.file;
      let body: Record<string, unknown>;
      if (path) {
        const size = fileSize(path);
        if (size > MAX_FILE_BYTES) throw new CliError(`${path} is ${Math.round(size / 1024 / 1024)} MB; the limit is 70 MB`, ExitCode.Usage);
        body = {
          chatId: chat,
          type: opts.image ? 'image' : 'file',
          base64: readFileSync(path).toString('base64'),
          ...(opts.file ? { filename: basename(path) } : {}),
          ...(text ? { caption: text } : {}),
        };
      } else {
        if (!text) throw new CliError('give the text to send, or --image/--file', ExitCode.Usage);
        body = { chatId: chat, type: 'text', text };
      }
      const result = await createClient(globals).request<Record<string, unknown>>('POST', `/api/sessions/${encodeURIComponent(session)}/messages/send`, body);
      if (globals.json) return printJson(result);
      printRecord(result);
    });
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    throw new CliError(`cannot read ${path}`, ExitCode.Usage);
  }
}
