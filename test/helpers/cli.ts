// Runs the built `gateway` binary to completion (stdin not a terminal) and collects its exit code and output.
import { execFile } from 'node:child_process';
import { BIN, MASTER_KEY, type TestDaemon } from './daemon.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<RunResult> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', GATEWAY_ENV_FILE: '', ...options.env }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

/** The environment that points the CLI at a test daemon with the master key. */
export const daemonEnv = (daemon: TestDaemon): Record<string, string> => ({ GATEWAY_URL: daemon.url, GATEWAY_MASTER_KEY: MASTER_KEY });

/** `gateway …` against a test daemon (read lazily: the daemon starts in a before hook). */
export const cliFor = (daemon: () => TestDaemon) => (...args: string[]): Promise<RunResult> =>
  runCli(args, { cwd: daemon().dataDir, env: daemonEnv(daemon()) });
