// The event log's kill -9 test (issue 30): a reader follows a session's stream while a burst of messages arrives, the
// daemon is killed mid-burst, and the reader resumes from the last id it got once the daemon is back. Across both
// streams it sees every committed event exactly once, in order: none it saw was lost, none is missing, none repeated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { sseMessages } from '../../src/events/sse.js';

interface Reader {
  events: Array<{ id: string; seq: number; event: string }>;
  lastId: string | undefined;
  ended: Promise<void>;
  close(): void;
}

function follow(daemon: TestDaemon, lastId: string | undefined, into: Reader['events']): Reader {
  const controller = new AbortController();
  const reader: Reader = { events: into, lastId, ended: Promise.resolve(), close: () => controller.abort() };
  reader.ended = (async () => {
    try {
      const response = await fetch(`${daemon.url}/api/events/stream?session=alice`, {
        headers: { Authorization: `Bearer ${daemon.masterKey}`, ...(lastId ? { 'Last-Event-ID': lastId } : {}) },
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      for await (const message of sseMessages(response.body as unknown as AsyncIterable<Uint8Array>)) {
        const event = JSON.parse(message.data);
        reader.events.push({ id: event.id, seq: event.seq, event: event.event });
        reader.lastId = message.id;
      }
    } catch {
      // the daemon died, or the reader closed
    }
  })();
  return reader;
}

async function logged(daemon: TestDaemon): Promise<Array<{ id: string; seq: number }>> {
  const events: Array<{ id: string; seq: number }> = [];
  for (let after = 0; ; ) {
    const page = await daemon.request('GET', `/api/events?session=alice&after=${after}&limit=1000`);
    assert.equal(page.status, 200);
    events.push(...page.body.data.events.map((e: any) => ({ id: e.id, seq: e.seq })));
    after = page.body.data.nextAfter;
    if (!page.body.data.hasMore) return events;
  }
}

test('killed mid-burst and restarted: the resumed reader has seen every committed event exactly once, in order', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'event-log-crash-'));
  const port = await freePort();
  const env = { GATEWAY_LOG_LEVEL: 'warn' };
  let daemon = await startDaemon({ dataDir, port, env });
  try {
    await pairedSession(daemon, 'alice', '+15550720001');
    const seen: Reader['events'] = [];
    // from the session's first event on
    const first = follow(daemon, '0', seen);
    await waitFor(() => seen.length > 0 || undefined, 5000, 'the stream is open');
    const burst = daemon.request('POST', '/api/sandbox/sessions/alice/inbound/burst', { count: 5000, contacts: 50 }).catch(() => undefined);
    await waitFor(() => (seen.length >= 300 ? true : undefined), 30_000, 'events streamed before the kill');
    await daemon.kill();
    await burst;
    await first.ended;
    const seenBeforeKill = seen.length;

    daemon = await startDaemon({ dataDir, port, env });
    const atRestart = await logged(daemon);
    assert.ok(atRestart.length >= seenBeforeKill, `the log has what was streamed (${atRestart.length} ≥ ${seenBeforeKill})`);
    const resumed = follow(daemon, first.lastId, seen);
    // the restored session goes on emitting: caught up once the reader has the log's newest, read after it
    let log = atRestart;
    await waitFor(async () => {
      log = await logged(daemon);
      return seen.at(-1)?.seq === log.at(-1)?.seq ? true : undefined;
    }, 30_000, 'the resumed stream caught up');
    // a little longer: nothing more (no duplicate) may come
    await new Promise((done) => setTimeout(done, 300));
    resumed.close();
    await resumed.ended;
    log = await logged(daemon);

    assert.deepEqual(
      seen.map((e) => e.seq),
      log.map((e) => e.seq),
      'every committed event once, in order',
    );
    assert.deepEqual(
      seen.map((e) => e.id),
      log.map((e) => e.id),
      'the same events: none streamed before the kill was taken back',
    );
    assert.deepEqual(
      log.map((e) => e.seq),
      log.map((_, i) => i + 1),
      'numbered without a gap',
    );
  } finally {
    await daemon.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
