// `gateway events tail`: streams events from the daemon's Server-Sent Events route, one line per event, until Ctrl-C or
// SIGTERM. A daemon that goes away (restart, network) is reconnected to with backoff, resuming after the last event
// printed, so none is missed or printed twice; only a refused key ends it. `--after` starts from an earlier cursor.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { sseMessages, type SseMessage } from '../../events/sse.js';
import { CliError, createClient, type DaemonClient, type GlobalOptions } from '../client.js';
import { printText } from '../output.js';

interface StreamedEvent {
  id: string;
  event: string;
  session: string;
  seq: number;
  timestamp: string;
  payload: unknown;
}

/** the daemon sends a heartbeat every 15 s: this long without a byte, the connection is taken for lost */
const SILENCE_MS = 45_000;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

function humanLine(data: string): string {
  try {
    const e = JSON.parse(data) as StreamedEvent;
    return `${e.timestamp}  ${e.session} #${e.seq}  ${e.event}  ${JSON.stringify(e.payload)}`;
  } catch {
    return data;
  }
}

/** A refusal that retrying cannot change (a bad filter, a refused key): the tail stops with it. */
class StreamRefused extends CliError {}

export function register(program: Command): void {
  const events = program.command('events').description('watch events as they happen');

  events
    .command('tail')
    .description(
      'stream events, one line each, until Ctrl-C (--json prints each event as a raw JSON line); reconnects when the daemon restarts, with the events sent meanwhile',
    )
    .option('--session <name>', 'only events of this session')
    .option('--events <list>', 'only these comma-separated event types')
    .option('--after <cursor>', "start after this point of the event log: a number with --session (0: the session's first event), else session:number pairs")
    .action(async (opts: { session?: string; events?: string; after?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = createClient(globals);
      const query = new URLSearchParams();
      if (opts.session) query.set('session', opts.session);
      if (opts.events) query.set('events', opts.events);
      const path = `/api/events/stream${query.size ? `?${query}` : ''}`;
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      const print = (data: string) => (globals.json ? process.stdout.write(`${data}\n`) : printText(`${humanLine(data)}\n`));
      try {
        await tail(client, path, opts.after, controller.signal, print);
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });
}

/**
 * Streams until `signal` aborts; between connections waits with backoff, saying on stderr when the daemon is away and
 * back. Each connection resumes after the last event printed (its cursor), or after `after` before any was.
 */
async function tail(client: DaemonClient, path: string, after: string | undefined, signal: AbortSignal, print: (data: string) => void): Promise<void> {
  let cursor = after;
  const printed = (message: SseMessage) => {
    print(message.data);
    if (message.id !== undefined) cursor = message.id;
  };
  let connectedBefore = false;
  let away = false;
  let retryMs = FIRST_RETRY_MS;
  while (!signal.aborted) {
    let why: string;
    try {
      await stream(client, path, cursor, signal, printed, () => {
        if (!connectedBefore) printText(`streaming events from ${client.baseUrl} (Ctrl-C to stop)\n`, process.stderr);
        else if (away) printText('reconnected (the events sent meanwhile follow)\n', process.stderr);
        connectedBefore = true;
        away = false;
        retryMs = FIRST_RETRY_MS;
      });
      why = 'the daemon closed the event stream';
    } catch (err) {
      if (signal.aborted) return;
      // a daemon never reached (a wrong --url) is an error at once, not a wait
      if (err instanceof StreamRefused || !connectedBefore) throw err;
      why = (err as Error).message;
    }
    if (signal.aborted) return;
    if (!away) printText(`daemon unreachable, retrying… (${why})\n`, process.stderr);
    away = true;
    try {
      await sleep(retryMs, undefined, { signal });
    } catch {
      return;
    }
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  }
}

/** One connection: resolves when the daemon ends the stream, throws when it cannot be opened or breaks. */
async function stream(client: DaemonClient, path: string, cursor: string | undefined, signal: AbortSignal, print: (message: SseMessage) => void, opened: () => void): Promise<void> {
  const connection = new AbortController();
  const abort = () => connection.abort();
  signal.addEventListener('abort', abort);
  let silence: NodeJS.Timeout | undefined;
  const heard = () => {
    clearTimeout(silence);
    silence = setTimeout(abort, SILENCE_MS);
  };
  try {
    heard();
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...(cursor !== undefined ? { 'Last-Event-ID': cursor } : {}) };
    const response = await client.raw('GET', path, { headers, signal: connection.signal });
    if (!response.ok || !response.body) {
      const text = await response.text();
      let error: { code: string; message: string } | undefined;
      try {
        error = (JSON.parse(text) as { error?: { code: string; message: string } }).error;
      } catch {
        error = undefined;
      }
      const message = error ? `${error.code}: ${error.message}` : `HTTP ${response.status} from the event stream`;
      // a daemon starting or busy (5xx, 429) is worth another try; a refused key or a bad filter is not
      if (response.status < 500 && response.status !== 429) throw new StreamRefused(message);
      throw new Error(message);
    }
    opened();
    async function* watched(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
      for await (const chunk of body) {
        heard();
        yield chunk;
      }
    }
    for await (const message of sseMessages(watched(response.body as unknown as AsyncIterable<Uint8Array>))) print(message);
    if (connection.signal.aborted && !signal.aborted) throw new Error(`nothing heard from the daemon for ${SILENCE_MS / 1000} s`);
  } catch (err) {
    if (connection.signal.aborted && !signal.aborted) throw new Error(`nothing heard from the daemon for ${SILENCE_MS / 1000} s`);
    throw err;
  } finally {
    clearTimeout(silence);
    signal.removeEventListener('abort', abort);
  }
}
