// `gateway events tail`: streams live events from the daemon's Server-Sent Events route, one line per event, until Ctrl-C.
import type { Command } from 'commander';
import { sseData } from '../../events/sse.js';
import { CliError, createClient, type GlobalOptions } from '../client.js';
import { printText } from '../output.js';

interface StreamedEvent {
  id: string;
  event: string;
  session: string;
  timestamp: string;
  payload: unknown;
}

function humanLine(data: string): string {
  try {
    const e = JSON.parse(data) as StreamedEvent;
    return `${e.timestamp}  ${e.session}  ${e.event}  ${JSON.stringify(e.payload)}`;
  } catch {
    return data;
  }
}

export function register(program: Command): void {
  const events = program.command('events').description('watch events as they happen');

  events
    .command('tail')
    .description('stream live events, one line each, until Ctrl-C (--json prints each event as a raw JSON line)')
    .option('--session <name>', 'only events of this session')
    .option('--events <list>', 'only these comma-separated event types')
    .action(async (opts: { session?: string; events?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = createClient(globals);
      const query = new URLSearchParams();
      if (opts.session) query.set('session', opts.session);
      if (opts.events) query.set('events', opts.events);
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      // a closed pipe (`| head -1`) ends the tail quietly
      process.stdout.on('error', stop);
      try {
        const response = await client.raw('GET', `/api/events/stream${query.toString() ? `?${query}` : ''}`, {
          headers: { Accept: 'text/event-stream' },
          signal: controller.signal,
        });
        if (!response.ok || !response.body) {
          const text = await response.text();
          let error: { code: string; message: string } | undefined;
          try {
            error = (JSON.parse(text) as { error?: { code: string; message: string } }).error;
          } catch {
            error = undefined;
          }
          throw new CliError(error ? `${error.code}: ${error.message}` : `HTTP ${response.status} from the event stream`);
        }
        printText(`streaming events from ${client.baseUrl} (Ctrl-C to stop)\n`, process.stderr);
        for await (const data of sseData(response.body as unknown as AsyncIterable<Uint8Array>)) {
          if (globals.json) process.stdout.write(`${data}\n`);
          else printText(`${humanLine(data)}\n`);
        }
        if (!controller.signal.aborted) throw new CliError('the daemon closed the event stream');
      } catch (err) {
        if (controller.signal.aborted) return;
        throw err;
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });
}
