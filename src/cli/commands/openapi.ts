// `gateway openapi [--output FILE]`: the OpenAPI 3.1 document, built from the route table without a running daemon (code generation in CI).
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('openapi')
    .description('print the OpenAPI 3.1 document of the REST API (the same as GET /api/openapi.json), no daemon needed')
    .option('-o, --output <file>', 'write it to FILE instead of standard output')
    .action(async (opts: { output?: string }) => {
      // the route table is the daemon's; the other commands do not pay for importing it
      const { standaloneDocument } = await import('../../http/document.js');
      const text = `${JSON.stringify(standaloneDocument(), null, 2)}\n`;
      if (opts.output) {
        writeFileSync(opts.output, text);
        process.stderr.write(`wrote ${opts.output}\n`);
      } else {
        process.stdout.write(text);
      }
    });
}
