// `gateway cluster status`: the nodes of a cluster on one PostgreSQL database and the sessions each runs (GET /api/cluster).
import type { Command } from 'commander';
import { createClient, type GlobalOptions } from '../client.js';
import { printJson, printTable, printText } from '../output.js';

interface ClusterStatus {
  node: string;
  leaseSeconds: number;
  nodes: Array<{ id: string; url: string; startedAt: string; heartbeatAt: string; sessions: string[] }>;
}

export function register(program: Command): void {
  const cluster = program.command('cluster').description('the nodes of a cluster (store.kind: postgres) and their sessions');
  cluster
    .command('status')
    .description('list the nodes alive now, where each is reached, and the sessions each runs')
    .action(async (_opts: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const status = await createClient(globals).request<ClusterStatus>('GET', '/api/cluster');
      if (globals.json) return printJson(status);
      printTable(
        ['node', 'url', 'sessions', 'heartbeat', 'running'],
        status.nodes.map((node) => [node.id + (node.id === status.node ? ' (answered)' : ''), node.url, String(node.sessions.length), node.heartbeatAt, node.sessions.join(', ')]),
      );
      printText(`${status.nodes.length} node(s), leases of ${status.leaseSeconds} s\n`);
    });
}
