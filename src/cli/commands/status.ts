// `gateway status`: the daemon's health (GET /api/health): version, uptime, session counts.
import type { Command } from 'commander';
import { createClient, type GlobalOptions } from '../client.js';
import { printJson, printText } from '../output.js';

interface Health {
  status: string;
  version: string;
  uptime: number;
  sessions: { total: number; connected: number };
}

export function register(program: Command): void {
  program
    .command('status')
    .description('show whether the daemon is up, its version, uptime and session counts')
    .action(async (_opts: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = createClient(globals);
      const health = await client.request<Health>('GET', '/api/health');
      if (globals.json) {
        printJson(health);
        return;
      }
      printText(
        `gateway ${health.version} at ${client.baseUrl}: ${health.status}, up ${formatUptime(health.uptime)}\n` +
          `sessions: ${health.sessions.total} total, ${health.sessions.connected} connected\n`,
      );
    });
}

/** 93784 → "1d 2h 3m 4s"; leading zero units are left out. */
export function formatUptime(seconds: number): string {
  const units: Array<[string, number]> = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  let rest = Math.max(0, Math.floor(seconds));
  const parts: string[] = [];
  for (const [unit, size] of units) {
    const value = Math.floor(rest / size);
    rest -= value * size;
    if (value > 0 || parts.length > 0 || unit === 's') parts.push(`${value}${unit}`);
  }
  return parts.join(' ');
}
