// The confirmation gate (src/engine/baileys/commit-gate.ts) over a stand-in for a built Baileys socket: receipts and
// acks reach the WebSocket only after what they confirm is committed, in order, never when the store cannot commit;
// the Signal key writes of a decryption are staged and written with the message.
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONNECTION_CONFIG, proto, type BinaryNode, type WASocket } from '@whiskeysockets/baileys';
import { loadAuthState } from '../../src/engine/baileys/auth-state.js';
import { ConfirmationGate, type GateDeps } from '../../src/engine/baileys/commit-gate.js';
import { BaileysSession } from '../../src/engine/baileys/session.js';
import type { AuthStateStore, SessionOptions } from '../../src/engine/types.js';
import { createLogger } from '../../src/logger.js';

function fakeSocket() {
  const wire: string[] = [];
  let task: Promise<unknown> = Promise.resolve();
  const sock = {
    ws: { socket: { send: (data: string, cb?: (err?: Error) => void) => (wire.push(data), cb?.()) } },
    messageMutex: {
      mutex<T>(code: () => Promise<T> | T): Promise<T> {
        const run = task.then(() => code());
        task = run.catch(() => undefined);
        return run;
      },
    },
    ev: { emit: (_event: string, _data: unknown) => true, isBuffering: () => false, flush: () => false },
  };
  /** what Baileys' sendReceipt does: the debug line, then the frame, synchronously */
  const sendReceipt = (id: string) => {
    gate.noticeLog('sending receipt for messages', { messageIds: [id] });
    sock.ws.socket.send(`receipt ${id}`);
  };
  const sendAck = (tag: string, id: string) => {
    gate.noticeLog('sent ack', { recv: { tag, attrs: { id } } });
    sock.ws.socket.send(`ack ${tag} ${id}`);
  };
  let gate!: ConfirmationGate;
  return {
    sock,
    wire,
    sendReceipt,
    sendAck,
    install(deps: GateDeps) {
      gate = new ConfirmationGate(deps);
      gate.install(sock as unknown as WASocket);
      return gate;
    },
  };
}

function memoryStore(): AuthStateStore & { rows: Map<string, string>; stagedWrites: Array<Record<string, string | null>> } {
  const rows = new Map<string, string>();
  const stagedWrites: Array<Record<string, string | null>> = [];
  const write = (entries: Record<string, string | null>) => {
    for (const [key, value] of Object.entries(entries)) {
      if (value === null) rows.delete(key);
      else rows.set(key, value);
    }
  };
  return {
    rows,
    stagedWrites,
    get: async (key) => rows.get(key),
    getMany: async (keys) => new Map(keys.filter((k) => rows.has(k)).map((k) => [k, rows.get(k)!])),
    set: async (entries) => write(entries),
    stage(entries) {
      stagedWrites.push(entries);
      write(entries);
    },
    clear: async () => rows.clear(),
    isEmpty: async () => rows.size === 0,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** a commit the test settles by hand */
function manualCommits() {
  const waiting: Array<{ resolve(): void; reject(err: Error): void; alsoWrite?: () => void }> = [];
  return {
    waiting,
    committed: (alsoWrite?: () => void) =>
      new Promise<void>((resolve, reject) => {
        waiting.push({ resolve, reject, ...(alsoWrite ? { alsoWrite } : {}) });
      }),
  };
}

describe('baileys confirmation gate', () => {
  it("holds a message's receipt until its upsert is committed with its staged keys, and the frames after it behind it", async () => {
    const fake = fakeSocket();
    const store = memoryStore();
    const auth = await loadAuthState(store);
    const commits = manualCommits();
    const gate = fake.install({
      flushEvents: () => {},
      committed: commits.committed,
      staged: (batch, work) => auth.staged(batch, work),
      commitStaged: (batch) => auth.commitStaged(batch),
      abort: () => assert.fail('no abort expected'),
      logger: createLogger('silent'),
    });

    await fake.sock.messageMutex.mutex(async () => {
      // the decryption's key writes: staged, read back, not written
      await auth.keys.set({ session: { 'peer.0': { ratchet: 1 } as never } });
      assert.deepEqual(await auth.keys.get('session', ['peer.0']), { 'peer.0': { ratchet: 1 } });
      assert.equal(store.rows.size, 0);
      fake.sendReceipt('M1');
    });
    fake.sock.ws.socket.send('iq after');
    assert.deepEqual(fake.wire, [], 'nothing leaves before the message is with the mapper');

    gate.upserted([{ id: 'M1', historyNotification: false }]);
    await tick();
    assert.deepEqual(fake.wire, [], 'nor before its commit');
    // the section's end and the upsert each ask for a commit; the keys are written inside one of them
    for (const commit of commits.waiting) commit.alsoWrite?.();
    assert.deepEqual(store.stagedWrites, [{ 'baileys:session:peer.0': JSON.stringify({ ratchet: 1 }) }]);
    for (const commit of commits.waiting) commit.resolve();
    await tick();
    assert.deepEqual(fake.wire, ['receipt M1', 'iq after']);
  });

  it("releases a history notification's receipt only with its history batch", async () => {
    const fake = fakeSocket();
    const gate = fake.install({ flushEvents: () => {}, committed: async (alsoWrite) => alsoWrite?.(), staged: (_b, work) => work(), commitStaged: () => {}, abort: () => {}, logger: createLogger('silent') });
    let history!: () => void;
    const section = fake.sock.messageMutex.mutex(async () => {
      fake.sendReceipt('H1');
      // the history is processed (and the app-state sync waits on the network) inside the section
      await new Promise<void>((resolve) => (history = resolve));
    });
    await tick();
    gate.upserted([{ id: 'H1', historyNotification: true }]);
    await tick();
    assert.deepEqual(fake.wire, []);
    gate.historyArrived();
    await tick();
    assert.deepEqual(fake.wire, ['receipt H1']);
    history();
    await section;
  });

  it('sends an ack outside a section once the events emitted before it are committed', async () => {
    const fake = fakeSocket();
    const steps: string[] = [];
    const commits = manualCommits();
    fake.install({
      flushEvents: () => steps.push('flush'),
      committed: (alsoWrite) => (steps.push('committed'), commits.committed(alsoWrite)),
      staged: (_b, work) => work(),
      commitStaged: () => {},
      abort: () => {},
      logger: createLogger('silent'),
    });
    fake.sendAck('receipt', 'R1');
    fake.sock.ws.socket.send('presence');
    await tick();
    assert.deepEqual(steps, ['flush', 'committed']);
    assert.deepEqual(fake.wire, []);
    commits.waiting[0]!.resolve();
    await tick();
    assert.deepEqual(fake.wire, ['ack receipt R1', 'presence']);
  });

  it('confirms nothing while the store cannot commit: the connection is dropped instead, without an unhandled rejection', async () => {
    const fake = fakeSocket();
    const store = memoryStore();
    const auth = await loadAuthState(store);
    const aborted: unknown[] = [];
    const gate = fake.install({
      flushEvents: () => {},
      committed: async (alsoWrite) => {
        alsoWrite?.();
        throw new Error('SQLITE_FULL: database or disk is full');
      },
      staged: (batch, work) => auth.staged(batch, work),
      commitStaged: (batch) => auth.commitStaged(batch),
      abort: (err) => {
        aborted.push(err);
        auth.dropStaged();
      },
      logger: createLogger('silent'),
    });
    await fake.sock.messageMutex.mutex(async () => {
      fake.sendReceipt('M2');
    });
    gate.upserted([{ id: 'M2', historyNotification: false }]);
    await tick();
    await tick();
    fake.sock.ws.socket.send('later');
    assert.deepEqual(fake.wire, [], 'neither the receipt nor what followed it left');
    assert.equal(aborted.length, 1);
    assert.match(String(aborted[0]), /disk is full/);
  });
});

describe('baileys confirmation gate: credentials', () => {
  it('lets no frame leave before a credentials write settles, and none after one that failed', async () => {
    const fake = fakeSocket();
    const gate = fake.install({ flushEvents: () => {}, committed: async (alsoWrite) => alsoWrite?.(), staged: (_b, work) => work(), commitStaged: () => {}, abort: () => assert.fail('no abort expected'), logger: createLogger('silent') });
    let saved!: () => void;
    gate.holdUntil(new Promise<void>((resolve) => (saved = resolve)));
    fake.sock.ws.socket.send('pair-device-sign');
    fake.sendAck('iq', 'A1');
    await tick();
    assert.deepEqual(fake.wire, [], 'held while the creds are written');
    saved();
    await tick();
    assert.deepEqual(fake.wire, ['pair-device-sign', 'ack iq A1'], 'then in order');
    // the session drops the connection after a failed write: nothing sent meanwhile leaves
    gate.holdUntil(Promise.reject(new Error('SQLITE_FULL: database or disk is full')));
    fake.sock.ws.socket.send('after the failure');
    await tick();
    assert.deepEqual(fake.wire, ['pair-device-sign', 'ack iq A1']);
  });
});

describe('baileys confirmation gate: hold limit', () => {
  it("drops the connection before Baileys' keepalive gives up on it while a receipt waits for a commit", async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const fake = fakeSocket();
    const aborted: unknown[] = [];
    // an auto-persist upload to a stalled S3: the commit does not settle
    const gate = fake.install({ flushEvents: () => {}, committed: () => new Promise<void>(() => {}), staged: (_b, work) => work(), commitStaged: () => {}, abort: (err) => aborted.push(err), logger: createLogger('silent') });
    await fake.sock.messageMutex.mutex(async () => {
      fake.sendReceipt('M3');
    });
    gate.upserted([{ id: 'M3', historyNotification: false }]);
    fake.sock.ws.socket.send('ping');
    // a held frame holds Baileys' pings: it ends a connection that received nothing for keepAliveIntervalMs + 5 s
    t.mock.timers.tick(DEFAULT_CONNECTION_CONFIG.keepAliveIntervalMs);
    assert.equal(aborted.length, 1, 'the gate dropped the connection itself');
    assert.deepEqual(fake.wire, [], 'and confirmed nothing');
  });
});

describe('baileys session: confirmations when the store fails', () => {
  let silent: NetServer;
  let url = '';
  const connections = new Set<Socket>();
  before(async () => {
    // accepts the connection and never answers: the socket stays connecting for the whole test
    silent = createNetServer((socket) => void connections.add(socket));
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    url = `ws://127.0.0.1:${(silent.address() as AddressInfo).port}/ws/chat`;
  });
  after(async () => {
    for (const socket of connections) socket.destroy();
    await new Promise<void>((done) => silent.close(() => done()));
  });

  const session = (store: Pick<SessionOptions, 'lookupMessage' | 'messageStored'>, committed?: SessionOptions['hooks']['committed']) =>
    new BaileysSession(
      { name: 's', config: {}, auth: memoryStore(), hooks: { connection: () => {}, event: () => {}, committed }, ...store },
      { websocketUrl: url, browser: ['test', 'Chrome', '1'], logger: createLogger('silent'), baileysLogLevel: 'silent', qr: { rotationSeconds: 60, maxRotations: 5 } },
    );
  type Internals = { sock: WASocket; keysStale: boolean; ctx: { lookupMessage(id: string): unknown }; mapper: { handle(events: unknown): unknown }; confirmStoredRedeliveries(sock: WASocket, messages: unknown[]): void; noticeSpentRedelivery(msg: string, fields: unknown): void };

  const redeliveredStub = { key: { id: 'R1', remoteJid: '15550000001@s.whatsapp.net', fromMe: false }, messageStubType: proto.WebMessageInfo.StubType.CIPHERTEXT };
  const unreadable = () => {
    throw new Error('SecretBoxError: the sealed column does not open');
  };

  it('does not confirm a redelivered message, nor crash, when the store cannot be read', async () => {
    const failing = () => {
      throw new Error('SQLITE_IOERR: disk I/O error');
    };
    // with the existence check the daemon gives, and with only the lookup (which opens the sealed copy)
    for (const store of [{ lookupMessage: unreadable, messageStored: failing }, { lookupMessage: unreadable }]) {
      const s = session(store);
      await s.connect();
      const internals = s as unknown as Internals;
      const sock = internals.sock;
      const receipts: string[][] = [];
      sock.sendReceipt = async (_jid, _participant, ids) => void receipts.push(ids);
      assert.doesNotThrow(() => internals.confirmStoredRedeliveries(sock, [redeliveredStub]));
      // the nack path looks it up from a setImmediate: a throw there would be an uncaught exception
      const uncaught: unknown[] = [];
      const onUncaught = (err: unknown) => uncaught.push(err);
      process.prependListener('uncaughtException', onUncaught);
      try {
        internals.noticeSpentRedelivery('sent ack', { recv: { tag: 'message', attrs: { id: 'R2', from: '15550000001@s.whatsapp.net' } }, sent: { error: '487' } });
        await tick();
        await tick();
      } finally {
        process.off('uncaughtException', onUncaught);
      }
      assert.deepEqual(uncaught, []);
      assert.deepEqual(receipts, [], 'nothing confirmed');
      await s.disconnect();
    }
  });

  it('confirms a stored redelivered message without opening its sealed copy', async () => {
    const s = session({ lookupMessage: unreadable, messageStored: async (id) => id === 'R1' });
    await s.connect();
    const internals = s as unknown as Internals;
    const receipts: string[][] = [];
    internals.sock.sendReceipt = async (_jid, _participant, ids) => void receipts.push(ids);
    internals.confirmStoredRedeliveries(internals.sock, [redeliveredStub]);
    await tick();
    assert.deepEqual(receipts, [['R1']]);
    await s.disconnect();
  });

  it('looks an offline stanza up before Baileys sees it, and holds the message stanzas after it in their order', async () => {
    let answer!: (stored: boolean) => void;
    const s = session({ messageStored: (id) => (id === 'OFF1' ? new Promise<boolean>((resolve) => (answer = resolve)) : Promise.resolve(id === 'OFF2')) });
    await s.connect();
    const internals = s as unknown as Internals;
    const ws = internals.sock.ws as unknown as { emit(event: string, node: unknown): boolean; on(event: string, listener: (node: BinaryNode) => void): void; removeAllListeners(event: string): void };
    // Baileys' own handler would decrypt these made-up stanzas: the test listens in its place
    ws.removeAllListeners('CB:message');
    const seen: string[] = [];
    ws.on('CB:message', (node) => seen.push(node.attrs.id!));
    const receipts: string[][] = [];
    internals.sock.sendReceipt = async (_jid, _participant, ids) => void receipts.push(ids);
    internals.sock.sendMessageAck = async () => {};
    const stanza = (id: string, offline: boolean): BinaryNode => ({ tag: 'message', attrs: { id, from: '15550000001@s.whatsapp.net', ...(offline ? { offline: '1' } : {}) }, content: [] });
    ws.emit('CB:message', stanza('OFF1', true));
    ws.emit('CB:message', stanza('LIVE1', false));
    ws.emit('CB:message', stanza('OFF2', true));
    ws.emit('CB:message', stanza('LIVE2', false));
    await tick();
    assert.deepEqual(seen, [], 'nothing overtakes the lookup under way');
    answer(false);
    await tick();
    assert.deepEqual(seen, ['OFF1', 'LIVE1', 'LIVE2'], 'in their order; the stored one never reaches Baileys');
    assert.deepEqual(receipts, [['OFF2']], 'the stored one is confirmed');
    ws.emit('CB:message', stanza('LIVE3', false));
    assert.equal(seen.at(-1), 'LIVE3', 'with nothing held, a live stanza goes through at once');
    await s.disconnect();
  });

  /** a message upserted inside its section, while the mapper does `mapping` */
  const upsertWith = async (committed: SessionOptions['hooks']['committed'], mapping: (internals: Internals) => void) => {
    const away = () => {
      throw new Error('connect ECONNREFUSED: PostgreSQL is away');
    };
    const s = session({ lookupMessage: away }, committed);
    await s.connect();
    const internals = s as unknown as Internals;
    internals.mapper.handle = () => mapping(internals);
    const sock = internals.sock;
    const gated = sock as unknown as { messageMutex: { mutex<T>(code: () => Promise<T>): Promise<T> } };
    await gated.messageMutex.mutex(async () => {
      sock.ev.emit('messages.upsert', { messages: [{ key: { id: 'M4', remoteJid: '15550000001@s.whatsapp.net', fromMe: false }, message: { conversation: 'hi' } }], type: 'notify' });
    });
    await tick();
    await tick();
    return { s, internals };
  };

  it('drops the connection instead of confirming a message the mapper could not handle for a store failure', async () => {
    let commits = 0;
    const { s, internals } = await upsertWith(
      async (alsoWrite) => {
        commits += 1;
        alsoWrite?.();
      },
      // a poll vote's poll looked up while the store is away
      (i) => i.ctx.lookupMessage('P1'),
    );
    assert.equal(commits, 0, 'nothing of it was committed or confirmed');
    assert.equal(internals.keysStale, true, 'the connection was dropped with its staged keys');
    await s.disconnect();
  });

  it('still confirms after a mapping bug that is not a store failure (a redelivery would fail the same way, forever)', async () => {
    let commits = 0;
    const { s, internals } = await upsertWith(
      async (alsoWrite) => {
        commits += 1;
        alsoWrite?.();
      },
      () => {
        throw new TypeError("Cannot read properties of undefined (reading 'jid')");
      },
    );
    assert.ok(commits > 0);
    assert.equal(internals.keysStale, false);
    await s.disconnect();
  });
});
