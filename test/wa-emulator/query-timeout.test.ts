// A server→client iq waits EmulatorOptions.queryTimeoutMs for its answer (a benchmark pairing hundreds of clients on a
// loaded machine sets it longer than the 10 s default).
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { Connection, type ConnectionHooks } from '../support/wa-emulator/connection.js';
import { createNoisePki } from '../support/wa-emulator/pki.js';
import { WS_OPEN, type WsSocket } from '../support/wa-emulator/ws.js';

/** A socket that is open and never answers. */
function silentSocket(): WsSocket {
  return Object.assign(new EventEmitter(), { readyState: WS_OPEN, send: () => undefined, close: () => undefined, terminate: () => undefined }) as unknown as WsSocket;
}

const hooks = (queryTimeoutMs: number): ConnectionHooks => ({
  onHandshake: () => undefined,
  onNode: () => undefined,
  onClose: () => undefined,
  record: () => undefined,
  log: () => undefined,
  queryTimeoutMs,
});

describe('emulator connection: query timeout', () => {
  it('rejects an unanswered iq after the configured time, not the default', async () => {
    const connection = new Connection(silentSocket(), createNoisePki(), hooks(150));
    const started = performance.now();
    await assert.rejects(connection.query({ tag: 'iq', attrs: {} }, 'q1'), /did not answer iq q1 within 150 ms/);
    const waited = performance.now() - started;
    assert.ok(waited >= 140 && waited < 5_000, `waited ${waited} ms`);
  });

  it('still takes an explicit timeout over the configured one', async () => {
    const connection = new Connection(silentSocket(), createNoisePki(), hooks(60_000));
    await assert.rejects(connection.query({ tag: 'iq', attrs: {} }, 'q2', 50), /within 50 ms/);
  });
});
