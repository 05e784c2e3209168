// `gateway doctor`: what an operator checks when something is off, each with a verdict and the fix; exit 1 on any fail.
import type { Command } from 'commander';
import { CliError, type GlobalOptions } from '../client.js';
import { runChecks, type Check } from '../doctor-checks.js';
import { ExitCode } from '../exit-codes.js';
import { printJson, printText } from '../output.js';

interface DoctorOptions {
  stuckAfter: string;
  failingAfter: string;
  backlogAge: string;
}

const seconds = (value: string, flag: string): number => {
  if (!/^\d+$/.test(value)) throw new CliError(`${flag} must be a whole number of seconds`, ExitCode.Usage);
  return Number(value);
};

export function register(program: Command): void {
  program
    .command('doctor')
    .description('check the configuration, files, database, daemon, sessions, webhooks, S3, backups and versions; exit 1 when a check fails')
    .option('--stuck-after <seconds>', 'a session CONNECTING (waiting for its QR, reconnecting) this long is stuck', '600')
    .option('--failing-after <seconds>', 'a webhook failing this long fails the check', '3600')
    .option('--backlog-age <seconds>', 'a pending delivery this old warns', '900')
    .action(async (opts: DoctorOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const checks = await runChecks(globals, {
        stuckAfterSeconds: seconds(opts.stuckAfter, '--stuck-after'),
        failingAfterSeconds: seconds(opts.failingAfter, '--failing-after'),
        backlogAgeSeconds: seconds(opts.backlogAge, '--backlog-age'),
      });
      const failed = checks.some((c) => c.verdict === 'fail');
      if (globals.json) printJson({ ok: !failed, checks });
      else printText(render(checks));
      // a configuration that does not load exits as every other command does with it (4), after the report
      const config = checks.find((c) => c.id === 'config' && c.verdict === 'fail');
      if (config) throw new CliError(config.detail, ExitCode.Config);
      if (failed) throw new CliError(`${checks.filter((c) => c.verdict === 'fail').length} check(s) failed`, ExitCode.Failure);
    });
}

function render(checks: Check[]): string {
  const width = Math.max(...checks.map((c) => c.id.length));
  const lines = checks.map((c) => `${c.verdict.toUpperCase().padEnd(4)}  ${c.id.padEnd(width)}  ${c.detail}${c.fix ? `\n${' '.repeat(width + 8)}fix: ${c.fix}` : ''}`);
  const counts = (['ok', 'warn', 'fail'] as const).map((v) => `${checks.filter((c) => c.verdict === v).length} ${v}`).join(', ');
  return `${lines.join('\n')}\n${counts}\n`;
}
