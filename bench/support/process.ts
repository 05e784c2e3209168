// Starts a compiled helper script as a child process and waits for the port it prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Child {
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startChild(script: string, env: Record<string, string> = {}): Promise<Child> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, [path], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const port = await new Promise<number>((done, fail) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /^(\d+)\n/.exec(out);
      if (match) done(Number(match[1]));
    });
    child.once('exit', (code) => fail(new Error(`${script} exited with ${code}`)));
  });
  return {
    port,
    process: child,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}
