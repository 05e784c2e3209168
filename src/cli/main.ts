// The commander program: global options, one register() per command file, errors printed as one line with an exit code.
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { CliError } from './client.js';
import { ExitCode } from './exit-codes.js';
import { COMMANDS } from './commands/index.js';
import { printText } from './output.js';

export function buildProgram(): Command {
  const program = new Command('gateway')
    .description('Self-hosted WhatsApp session gateway: daemon and CLI')
    .version(VERSION)
    .option('--url <url>', 'daemon address (default: GATEWAY_URL, gateway.yaml, http://127.0.0.1:3000)')
    .option('--master-key <key>', 'master key (default: GATEWAY_MASTER_KEY or gateway.yaml)')
    .option('-c, --config <file>', 'gateway.yaml path (default: GATEWAY_CONFIG or ./gateway.yaml)')
    .option('--json', 'print raw JSON for scripts')
    .showHelpAfterError()
    .exitOverride();
  for (const register of COMMANDS) register(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return ExitCode.Success;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? ExitCode.Success : ExitCode.Usage;
    }
    if (err instanceof CliError) {
      printText(`error: ${err.message}\n`, process.stderr);
      return err.exitCode;
    }
    printText(`error: ${(err as Error).message ?? String(err)}\n`, process.stderr);
    return ExitCode.Failure;
  }
}
