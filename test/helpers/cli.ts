// Runs the built `gateway` binary (stdin not a terminal): to completion, collecting its exit code and output, or in the
// background, its output readable while it runs.
import { execFile, spawn } from 'node:child_process';
import { BIN, MASTER_KEY, waitFor, type TestDaemon } from './daemon.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<RunResult> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', GATEWAY_ENV_FILE: '', ...options.env }, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
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

/** The CLI running in the background (killed after `killAfterMs`); its output readable while it runs. */
export function launchCli(args: string[], options: { cwd: string; env?: Record<string, string>; killAfterMs?: number }) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', GATEWAY_ENV_FILE: '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<RunResult>((done) => child.once('close', (code) => done({ code: code ?? -1, stdout, stderr })));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 60_000);
  void exited.then(() => clearTimeout(timer));
  /** waits (generously: CI machines are slow) until `check` gives a value, failing at once if the CLI exits first */
  const waitUntil = async <T>(check: () => T, what: string, timeoutMs = 30_000): Promise<NonNullable<T>> => {
    try {
      return await waitFor(() => check() || (child.exitCode !== null ? Promise.reject(new Error(`the CLI exited before ${what}`)) : null), timeoutMs, what) as NonNullable<T>;
    } catch (err) {
      throw new Error(`${(err as Error).message}\nstdout: ${stdout}\nstderr: ${stderr}`);
    }
  };
  const waitForOutput = (pattern: RegExp, what: string) => waitUntil(() => pattern.exec(stdout), what);
  return { child, exited, stdout: () => stdout, stderr: () => stderr, waitUntil, waitForOutput };
}
