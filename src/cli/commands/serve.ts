// `gateway serve`: loads the configuration, runs the daemon, and shuts it down once on SIGTERM/SIGINT (a second signal exits at once).
import { join } from 'node:path';
import type { Command } from 'commander';
import { ConfigError, resolveConfigPath } from '../../config/load.js';
import type { GatewayConfig } from '../../config/types.js';
import { ExitCode } from '../exit-codes.js';
import { accessCheck } from '../doctor-checks.js';
import { CliError, loadCliConfig, serviceEnvFileRead, type GlobalOptions } from '../client.js';
import { forTerminal } from '../output.js';

export function register(program: Command): void {
  program
    .command('serve')
    .description('run the gateway daemon')
    .option('--host <host>', 'listen address (overrides GATEWAY_HOST and gateway.yaml)')
    .option('--port <port>', 'listen port (overrides GATEWAY_PORT and gateway.yaml)')
    .action(async (opts: { host?: string; port?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const config = loadCliConfig(globals);
      if (opts.host) config.host = opts.host;
      if (opts.port) config.port = Number(opts.port);
      if (!config.auth.masterKey) {
        throw new CliError('no master key: set GATEWAY_MASTER_KEY or auth.masterKey in gateway.yaml (`gateway init` writes one)', ExitCode.Config);
      }
      // loaded here so that the other commands do not pay for importing the whole daemon
      const { startDaemon } = await import('../../daemon.js');
      // the handlers are in place before the daemon listens: a signal during its start (restoring sessions, joining the
      // cluster) stops it once it has started, where Node's default would kill it in the middle
      let signalled: NodeJS.Signals | undefined;
      let stopRequested = () => {};
      const stopWanted = new Promise<void>((resolve) => (stopRequested = resolve));
      let daemon: Awaited<ReturnType<typeof startDaemon>> | undefined;
      const onSignal = (signal: NodeJS.Signals) => {
        if (signalled) {
          daemon?.logger.warn({ signal }, 'second signal: exiting now');
          process.exit(ExitCode.Failure);
        }
        signalled = signal;
        stopRequested();
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
      try {
        daemon = await startDaemon(config);
      } catch (err) {
        // what the daemon opened before it failed (database connections, timers) must not keep the process running,
        // not listening: it exits once the error is printed
        setTimeout(() => process.exit(), 200).unref();
        if (err instanceof ConfigError) throw new CliError(err.message, ExitCode.Config);
        const code = (err as NodeJS.ErrnoException).code;
        // SQLite says only "unable to open database file": files another user owns (a restore run as root) are named
        if (config.store.kind === 'sqlite' && (code === 'SQLITE_CANTOPEN' || code === 'EACCES' || code === 'EPERM')) {
          const denied = accessCheck(config.dataDir, join(config.dataDir, 'gateway.db'), 'serve');
          if (denied) throw new CliError(`${denied.detail}\nfix: ${denied.fix}`, ExitCode.Failure);
        }
        if (code === 'EADDRINUSE') {
          throw new CliError(`${config.host}:${config.port} is taken by another program: choose another port (port in gateway.yaml, GATEWAY_PORT, or serve --port)`, ExitCode.Failure);
        }
        throw err;
      }
      // people starting it by hand get where to go; systemd, pipes and tests get the JSON log alone
      if (process.stdout.isTTY) process.stdout.write(forTerminal(serveBanner({ config, configPath: resolveConfigPath({ configPath: globals.config }), envFile: serviceEnvFileRead() })));
      await stopWanted;
      daemon.logger.info({ signal: signalled }, 'signal received');
      await daemon.close().catch((err: unknown) => {
        daemon!.logger.error({ err }, 'shutdown failed');
        process.exitCode = ExitCode.Failure;
      });
      // everything is closed; timers a network library leaves behind must not hold the process open
      process.exit();
    });
}

/** The few lines `gateway serve` prints on a terminal: where the API, console and docs are, and what it runs on. */
export function serveBanner({ config, configPath, envFile }: { config: GatewayConfig; configPath: string | undefined; envFile?: string }): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const base = `http://${host}:${config.port}`;
  const everywhere = config.host === '0.0.0.0' || config.host === '::' ? ` (listening on every address, ${config.host})` : '';
  const lines = [
    `gateway ready at ${base}${everywhere}`,
    `  API      ${base}/api  (the master key in Authorization: Bearer …)`,
    ...(config.console.enabled ? [`  console  ${base}/console`] : []),
    `  docs     ${base}/docs`,
    `  config   ${configPath ?? 'none: defaults and GATEWAY_* variables'}${envFile ? ` (from ${envFile})` : ''}`,
    config.store.kind === 'sqlite' ? `  data     ${config.dataDir}` : `  data     PostgreSQL; media in ${config.dataDir}`,
    'JSON log lines follow; Ctrl-C stops the daemon',
  ];
  return `${lines.join('\n')}\n`;
}
