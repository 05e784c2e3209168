// The commander program: global options, one register() per command file, errors printed as one line with an exit code.
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { CliError, takeServiceEnvironment, type GlobalOptions } from './client.js';
import { ExitCode } from './exit-codes.js';
import { COMMANDS } from './commands/index.js';
import { forTerminal, printText } from './output.js';

export function buildProgram(): Command {
  const program = new Command('gateway')
    .description('Self-hosted WhatsApp session gateway: daemon and CLI')
    .version(VERSION)
    .option('--url <url>', 'daemon address (default: GATEWAY_URL, gateway.yaml, http://127.0.0.1:3000)')
    .option('--master-key <key>', 'master key (default: GATEWAY_MASTER_KEY or gateway.yaml)')
    .option('-c, --config <file>', 'gateway.yaml path (default: GATEWAY_CONFIG or ./gateway.yaml)')
    .option('--json', 'print raw JSON for scripts')
    .configureOutput({ outputError: (message, write) => write(forTerminal(message)) })
    .exitOverride()
    .hook('preAction', (_program, action) => takeServiceEnvironment(action.optsWithGlobals<GlobalOptions>()));
  for (const register of COMMANDS) register(program);
  hintHelpAfterUsageErrors(program);
  return program;
}

/** A usage error prints one line and where to read more, not the whole help (commander copies settings only at creation). */
function hintHelpAfterUsageErrors(command: Command, names: string[] = []): void {
  const path = [...names, command.name()];
  command.showHelpAfterError(`Run '${path.join(' ')} --help' for usage.`);
  for (const sub of command.commands) hintHelpAfterUsageErrors(sub, path);
}

/** A closed pipe (`gateway openapi | head`) ends any command quietly, as it does for other Unix tools. */
function exitQuietlyOnClosedPipe(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(ExitCode.Success);
    throw err;
  });
}

export async function main(argv: string[]): Promise<number> {
  exitQuietlyOnClosedPipe();
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
