// One client WebSocket: Noise handshake, encrypted WABinary frames in and out, pending server→client iqs, closing.
import { binaryNodeToString, decodeBinaryNode, encodeBinaryNode, type BinaryNode } from '@whiskeysockets/baileys';
import type { EmulatorLog } from './log.js';
import { encodeFrame, FrameDecoder, ServerNoise, type HandshakeResult } from './noise.js';
import type { NoisePki } from './pki.js';
import type { Device, SignedPreKey } from './registry.js';
import { toBuffer, WS_OPEN, type WsSocket } from './ws.js';

/** What a registering (unpaired) client told us in its ClientPayload. */
export interface Registration {
  noiseKey: Buffer;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: SignedPreKey;
  refs: string[];
}

export interface ConnectionHooks {
  onHandshake(connection: Connection, result: HandshakeResult): Promise<void> | void;
  onNode(connection: Connection, node: BinaryNode): Promise<void> | void;
  onClose(connection: Connection): void;
  record(direction: 'in' | 'out', connection: Connection, node: BinaryNode): void;
  log: EmulatorLog;
  /** how long a server→client iq waits for the client's answer */
  queryTimeoutMs: number;
}

interface PendingIq {
  resolve(node: BinaryNode): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

let nextConnectionId = 1;

export class Connection {
  readonly id = nextConnectionId++;
  /** set once a paired device logs in */
  device: Device | undefined;
  /** set while an unpaired client waits for a QR scan or a pairing code */
  registration: Registration | undefined;
  /** true once the client sent `passive/active` and its offline queue was flushed */
  active = false;
  /** the silence fault: nothing is sent to the client (ping answers included) while the socket stays open */
  silent = false;
  private stage: 'hello' | 'finish' | 'transport' = 'hello';
  private readonly decoder = new FrameDecoder();
  private readonly noise: ServerNoise;
  private readonly pending = new Map<string, PendingIq>();
  private chain: Promise<void> = Promise.resolve();
  private closing = false;
  private closeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WsSocket,
    pki: NoisePki,
    private readonly hooks: ConnectionHooks,
  ) {
    this.noise = new ServerNoise(pki);
    ws.on('message', (data) => {
      const bytes = toBuffer(data);
      this.chain = this.chain.then(() => this.receive(bytes)).catch((error: unknown) => {
        hooks.log('connection error; closing', { connection: this.id, error: String(error) });
        this.ws.terminate();
      });
    });
    ws.on('close', () => this.onClosed());
    ws.on('error', (error) => hooks.log('websocket error', { connection: this.id, error: error.message }));
  }

  get open(): boolean {
    return !this.closing && this.ws.readyState === WS_OPEN;
  }

  /** Encrypts and sends a stanza; silently drops it once the connection is closing, or while it is silent. */
  send(node: BinaryNode): void {
    if (!this.open || !this.noise.established || this.silent) return;
    this.hooks.record('out', this, node);
    this.hooks.log(`>> ${this.device?.jid ?? `#${this.id}`}`, binaryNodeToString(node).slice(0, 300));
    this.ws.send(encodeFrame(this.noise.encryptTransport(encodeBinaryNode(node))));
  }

  /** Sends an iq and resolves with the client's result (or error) node. Never await this from inside a stanza handler. */
  query(node: BinaryNode, id: string, timeoutMs = this.hooks.queryTimeoutMs): Promise<BinaryNode> {
    node.attrs.id = id;
    return new Promise<BinaryNode>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`client did not answer iq ${id} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.send(node);
    });
  }

  /** Sends `stanza` (if any), then closes the socket shortly after so the client reads it first. */
  close(stanza?: BinaryNode, delayMs = 20): void {
    if (this.closing) return;
    if (stanza) this.send(stanza);
    this.closing = true;
    this.closeTimer = setTimeout(() => this.ws.close(), stanza ? delayMs : 0);
  }

  /** Kills the socket at once (server shutdown). */
  terminate(): void {
    this.closing = true;
    clearTimeout(this.closeTimer);
    this.ws.terminate();
  }

  private async receive(data: Buffer): Promise<void> {
    for (const frame of this.decoder.push(data)) {
      if (this.stage === 'hello') {
        const hello = this.noise.serverHello(frame);
        this.ws.send(encodeFrame(hello));
        this.stage = 'finish';
      } else if (this.stage === 'finish') {
        const result = this.noise.clientFinish(frame);
        this.stage = 'transport';
        await this.hooks.onHandshake(this, result);
      } else {
        if (this.closing) return;
        const node = await decodeBinaryNode(this.noise.decryptTransport(frame));
        this.hooks.record('in', this, node);
        this.hooks.log(`<< ${this.device?.jid ?? `#${this.id}`}`, binaryNodeToString(node).slice(0, 300));
        if (node.tag === 'iq' && (node.attrs.type === 'result' || node.attrs.type === 'error')) {
          const waiting = node.attrs.id ? this.pending.get(node.attrs.id) : undefined;
          if (waiting) {
            this.pending.delete(node.attrs.id!);
            clearTimeout(waiting.timer);
            waiting.resolve(node);
            continue;
          }
        }
        await this.hooks.onNode(this, node);
      }
    }
  }

  private onClosed(): void {
    this.closing = true;
    clearTimeout(this.closeTimer);
    for (const [id, waiting] of this.pending) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error(`connection closed before iq ${id} was answered`));
    }
    this.pending.clear();
    this.hooks.onClose(this);
  }
}
