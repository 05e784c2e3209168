// Test helpers: real Baileys clients wired to an emulator (quiet, no history wait), pairing them, and waiting for events.
import makeWASocket, {
  type BaileysEventMap,
  type ConnectionState,
  type UserFacingSocketConfig,
  type WAMessage,
  type WASocket,
} from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { unrefLeakedBaileysTimers } from './baileys-workarounds.js';
import { emulatorHttpsAgent, trustEmulator } from './client-trust.js';
import { memoryAuth, type MemoryAuth } from './memory-auth.js';
import { startEmulator, type WaEmulator } from './server.js';

/** `lastDisconnect.error.output.statusCode` of a close update (undefined for a deliberate `end(undefined)`). */
export const closeCode = (update: Partial<ConnectionState>): number | undefined =>
  (update.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;

export const textOf = (m: WAMessage): string | undefined =>
  m.message?.conversation ?? m.message?.extendedTextMessage?.text ?? m.message?.imageMessage?.caption ?? undefined;

/** Resolves with the first event `event` for which `match` returns true. */
export function waitForEvent<K extends keyof BaileysEventMap>(
  sock: WASocket,
  event: K,
  match: (payload: BaileysEventMap[K]) => boolean = () => true,
  timeoutMs = 10_000,
): Promise<BaileysEventMap[K]> {
  return new Promise((resolve, reject) => {
    const listener = (payload: BaileysEventMap[K]) => {
      if (!match(payload)) return;
      clearTimeout(timer);
      sock.ev.off(event, listener);
      resolve(payload);
    };
    const timer = setTimeout(() => {
      sock.ev.off(event, listener);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${String(event)}`));
    }, timeoutMs);
    sock.ev.on(event, listener);
  });
}

/** Waits for a connection.update whose accumulated state matches (so `open` + `receivedPendingNotifications` can arrive apart). */
export function waitForConnection(sock: WASocket, match: (state: Partial<ConnectionState>) => boolean, timeoutMs = 10_000): Promise<Partial<ConnectionState>> {
  const state: Partial<ConnectionState> = {};
  return waitForEvent(sock, 'connection.update', (update) => {
    Object.assign(state, update);
    return match(state) || match(update);
  }, timeoutMs).then((update) => ({ ...state, ...update }));
}

/** Resolves with the first upserted message that matches. */
export async function waitForMessage(sock: WASocket, match: (m: WAMessage, type: string) => boolean, timeoutMs = 10_000): Promise<WAMessage> {
  let found: WAMessage | undefined;
  await waitForEvent(sock, 'messages.upsert', ({ messages, type }) => {
    found = messages.find((m) => match(m, type));
    return !!found;
  }, timeoutMs);
  return found!;
}

export interface ClientOptions {
  /** extra makeWASocket config (overrides the quiet test defaults) */
  config?: Partial<UserFacingSocketConfig>;
  /** Baileys log level (default: WA_EMULATOR_BAILEYS_LOG or 'silent') */
  logLevel?: string;
  /** keep Baileys' default history-sync settings instead of turning history off (as a gateway might) */
  historySync?: boolean;
}

/** A Baileys client of the emulator with in-memory auth that survives reconnects. */
export class TestClient {
  sock: WASocket;
  private ended = false;
  /** highest status seen per own message id, from messages.upsert and messages.update */
  private readonly statuses = new Map<string, number>();
  private readonly statusWaiters = new Set<() => void>();

  constructor(
    readonly emulator: WaEmulator,
    readonly auth: MemoryAuth = memoryAuth(),
    private readonly options: ClientOptions = {},
  ) {
    unrefLeakedBaileysTimers();
    this.sock = this.connect();
  }

  /**
   * Resolves once message `id` reached `status` (proto.WebMessageInfo.Status). Baileys folds a receipt that arrives
   * while the own upsert is still buffered into that upsert instead of emitting messages.update, so both are tracked.
   */
  waitForStatus(id: string, status: number, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if ((this.statuses.get(id) ?? 0) < status) return;
        clearTimeout(timer);
        this.statusWaiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.statusWaiters.delete(check);
        reject(new Error(`message ${id} did not reach status ${status} within ${timeoutMs} ms (has ${this.statuses.get(id) ?? 'none'})`));
      }, timeoutMs);
      this.statusWaiters.add(check);
      check();
    });
  }

  private trackStatus(id: string | null | undefined, status: number | null | undefined): void {
    if (!id || typeof status !== 'number' || status <= (this.statuses.get(id) ?? -1)) return;
    this.statuses.set(id, status);
    for (const check of [...this.statusWaiters]) check();
  }

  /** PN device jid once paired (`phone:N@s.whatsapp.net`) */
  get jid(): string {
    return this.auth.state.creds.me?.id ?? '';
  }

  get lid(): string {
    return this.auth.state.creds.me?.lid ?? '';
  }

  /** `phone@s.whatsapp.net` */
  get userJid(): string {
    return this.jid.replace(/:\d+@/, '@');
  }

  get userLid(): string {
    return this.lid.replace(/:\d+@/, '@');
  }

  /** Ends the current socket (if any) and opens a new one with the same auth. */
  async reconnect(): Promise<WASocket> {
    await this.endSocket();
    this.ended = false;
    this.sock = this.connect();
    return this.sock;
  }

  /** Reconnects and waits until `open` and the offline backlog is flushed. */
  async reconnectAndWaitOpen(timeoutMs = 10_000): Promise<void> {
    const sock = await this.reconnect();
    await waitForConnection(sock, (s) => s.connection === 'open' && s.receivedPendingNotifications === true, timeoutMs);
  }

  async close(): Promise<void> {
    await this.endSocket();
  }

  private connect(): WASocket {
    const level = this.options.logLevel ?? process.env.WA_EMULATOR_BAILEYS_LOG ?? 'silent';
    const sock = makeWASocket({
      waWebSocketUrl: this.emulator.wsUrl,
      auth: this.auth.state,
      logger: pino({ level }),
      // no history by default (the emulator's is empty anyway), don't go online, keep timeouts short
      ...(this.options.historySync ? {} : { shouldSyncHistoryMessage: () => false, syncFullHistory: false }),
      markOnlineOnConnect: false,
      connectTimeoutMs: 10_000,
      defaultQueryTimeoutMs: 10_000,
      fetchAgent: emulatorHttpsAgent(this.emulator.tlsCert),
      ...this.options.config,
    });
    sock.ev.on('messages.upsert', ({ messages }) => {
      for (const m of messages) if (m.key.fromMe) this.trackStatus(m.key.id, m.status);
    });
    sock.ev.on('messages.update', (updates) => {
      for (const u of updates) this.trackStatus(u.key.id, u.update.status);
    });
    return sock;
  }

  private async endSocket(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const sock = this.sock;
    sock.ev.removeAllListeners('connection.update');
    await sock.end(undefined);
  }
}

/** Pairs a new client by QR as the phone `phone`, then reconnects it (after 515) and waits for `open`. */
export async function pairByQr(emulator: WaEmulator, phone: string, options: ClientOptions = {}): Promise<TestClient> {
  const client = new TestClient(emulator, memoryAuth(), options);
  const { qr } = await waitForConnection(client.sock, (s) => !!s.qr);
  const closed = waitForConnection(client.sock, (s) => s.connection === 'close');
  await emulator.control.scanQr(qr!, phone);
  const update = await closed;
  if (closeCode(update) !== 515) throw new Error(`expected 515 after pairing, got ${closeCode(update)}`);
  await client.reconnectAndWaitOpen();
  return client;
}

/** Pairs a new client with a pairing code as the phone `phone`, then reconnects it and waits for `open`. */
export async function pairByCode(emulator: WaEmulator, phone: string, options: ClientOptions = {}): Promise<{ client: TestClient; code: string }> {
  const client = new TestClient(emulator, memoryAuth(), options);
  await waitForConnection(client.sock, (s) => !!s.qr); // registration is up
  const code = await client.sock.requestPairingCode(phone);
  const closed = waitForConnection(client.sock, (s) => s.connection === 'close');
  await emulator.control.enterPairingCode(phone, code);
  const update = await closed;
  if (closeCode(update) !== 515) throw new Error(`expected 515 after pairing, got ${closeCode(update)}`);
  await client.reconnectAndWaitOpen();
  return { client, code };
}

/**
 * What most emulator suites start from: a fresh emulator trusted by this process, Alice (15550001111) and Bob
 * (15550002222) paired by QR, and `others` as accounts with no client.
 */
export async function startWithAliceAndBob(others: Array<{ phone: string; pushName: string }> = []): Promise<{ emu: WaEmulator; alice: TestClient; bob: TestClient }> {
  const emu = await startEmulator();
  await trustEmulator(emu);
  for (const account of [{ phone: '15550001111', pushName: 'Alice' }, { phone: '15550002222', pushName: 'Bob' }, ...others]) emu.control.createAccount(account);
  return { emu, alice: await pairByQr(emu, '15550001111'), bob: await pairByQr(emu, '15550002222') };
}

/** Closes clients, then the emulator (each may be unset when the setup failed). */
export async function closeAll(...closable: Array<{ close(): Promise<unknown> } | undefined>): Promise<void> {
  for (const item of closable) await item?.close();
}
