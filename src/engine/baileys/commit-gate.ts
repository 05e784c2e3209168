// Confirmations leave for WhatsApp only after what they confirm is committed. Baileys sends a message's delivery
// receipt before it emits the message, and acks a receipt or a notification before its events leave its buffer: a
// kill -9 in between lost what WhatsApp had been told was delivered, and WhatsApp never sends it again.
//
// Why a gate on the socket and not a patch: Baileys is pinned (7.0.0-rc14) and offers no hook on its send path
// (socket.js captures promisify(ws.send) and the frame encoder at construction; messages-recv destructures sendNode
// and sendReceipt from the layers below), and node_modules is one install that a patch would have to be re-applied to.
// What a built socket still exposes is enough:
// - the raw WebSocket's send: frames there are Noise-encrypted under a running counter, so a held frame holds every
//   later one, and they leave in order;
// - the logger: Baileys logs 'sending receipt for messages' (with the message ids) and 'sent ack' (with the stanza)
//   at debug, synchronously, just before it writes such a frame, which marks the next frame as a confirmation;
// - the message mutex: each received message is decrypted, receipted and emitted inside one `messageMutex.mutex`
//   section, so the Signal key writes of its decryption are staged there and committed with the message;
// - the event emitter: the upsert of a held message is flushed out of Baileys' buffer at once (the rest of its
//   section may wait on the network: the app-state sync a history notification starts).
// A receipt is released once the upsert of its message is mapped and committed (a history notification's, once its
// history batch is too), or when its section ends; an ack outside a section once the events before it are committed.
import type { WASocket } from '@whiskeysockets/baileys';
import type { Logger } from '../../logger.js';
import type { StagedKeys } from './auth-state.js';

/** Baileys' debug lines written right before a confirmation frame (messages-send.js sendReceipt, messages-recv.js sendMessageAck) */
const RECEIPT_LINE = 'sending receipt for messages';
const ACK_LINE = 'sent ack';

/**
 * How long a confirmation may wait for its commit before the connection is dropped instead (a stuck section, a slow
 * store, an auto-persist upload to a stalled S3). A held frame holds every later one, Baileys' keepalive pings too, and
 * Baileys ends a connection that received nothing for its keepalive interval (30 s) plus 5 s: the gate drops it first,
 * so that the staged keys are dropped with it and the messages it had not confirmed decrypt again when redelivered.
 */
export const HOLD_LIMIT_MS = 20_000;

export interface GateDeps {
  /** hands Baileys' buffered events to the event mapper now */
  flushEvents(): void;
  /** settles once every event handed to the mapper so far is stored and committed (`alsoWrite` with them); rejects if one was not */
  committed(alsoWrite?: () => Promise<void> | undefined): Promise<void>;
  /** runs one message's section with its Signal key writes staged in `batch` */
  staged<R>(batch: StagedKeys, work: () => Promise<R>): Promise<R>;
  /** writes what a staged batch holds (inside the tick of the events it belongs to); a promise when that write is fenced */
  commitStaged(batch: StagedKeys): Promise<void> | undefined | void;
  /** what was held cannot be confirmed: the connection must go, so WhatsApp delivers the unconfirmed stanzas again */
  abort(err: unknown): void;
  logger: Logger;
}

type SendCallback = (err?: Error) => void;
type RawSend = (data: unknown, options?: unknown, cb?: SendCallback) => void;

interface Frame {
  data: unknown;
  options: unknown;
  /** not a frame: a write (the credentials) every later frame waits for */
  hold?: Promise<unknown>;
  /** a confirmation: what it confirms must be committed first */
  confirms?: {
    /** the message ids it confirms (a receipt, or the ack of a message stanza) */
    ids: string[];
    section?: Section;
    /** its message is a history notification: released with the history batch */
    awaitsHistory?: boolean;
    release?: Promise<void>;
    watchdog?: NodeJS.Timeout;
  };
}

interface Section {
  staged: StagedKeys;
}

interface MessageMutex {
  mutex<T>(code: () => Promise<T> | T): Promise<T>;
}

type Emit = (event: string, data: unknown) => boolean;

export class ConfirmationGate {
  private readonly queue: Frame[] = [];
  private draining = false;
  /** the store failed: nothing is confirmed or committed any more on this socket */
  private aborted = false;
  /** the socket was let go: its frames are dropped, its sections still commit their keys */
  private stopped = false;
  /** set by Baileys' log line right before a confirmation frame */
  private nextConfirms: string[] | undefined;
  private openSection: Section | undefined;
  private rawSend: RawSend | undefined;

  constructor(private readonly deps: GateDeps) {}

  /** Wraps a freshly built socket (makeWASocket connects its WebSocket synchronously, so the raw socket exists). */
  install(sock: WASocket): void {
    const raw = (sock.ws as unknown as { socket: { send: RawSend } | null }).socket;
    if (!raw) throw new Error('the Baileys socket has no WebSocket to gate');
    const send = raw.send.bind(raw);
    this.rawSend = send;
    raw.send = (data, options, cb) => (typeof options === 'function' ? this.send(data, undefined, options as SendCallback) : this.send(data, options, cb));
    const mutex = (sock as unknown as { messageMutex: MessageMutex }).messageMutex;
    const lock = mutex.mutex.bind(mutex);
    mutex.mutex = <T>(code: () => Promise<T> | T) => lock(() => this.section(code));
    const ev = sock.ev as unknown as { emit: Emit };
    const emit = ev.emit.bind(ev);
    ev.emit = (event, data) => {
      const buffered = emit(event, data);
      if ((event === 'messages.upsert' || event === 'messaging-history.set') && this.holdsConfirmations()) queueMicrotask(() => this.deps.flushEvents());
      return buffered;
    };
  }

  /** Baileys' logger wrote a debug line: the confirmation lines come right before their frame. */
  noticeLog(message: string | undefined, fields: unknown): void {
    if (message !== RECEIPT_LINE && message !== ACK_LINE) return;
    const f = fields as { messageIds?: string[]; recv?: { tag?: string; attrs?: { id?: string } } } | undefined;
    this.nextConfirms = message === RECEIPT_LINE ? (f?.messageIds ?? []) : f?.recv?.tag === 'message' && f.recv.attrs?.id ? [f.recv.attrs.id] : [];
    // the frame follows in the same synchronous call; if it never comes (socket closed), the mark must not stick
    queueMicrotask(() => {
      this.nextConfirms = undefined;
    });
  }

  /**
   * Upserts the mapper was just handed (in order after what came before): receipts of these messages are released
   * once it is committed, those of history notifications once their history batch is.
   */
  upserted(messages: Array<{ id: string; historyNotification: boolean }>): void {
    for (const message of messages) {
      for (const frame of this.queue) {
        const confirms = frame.confirms;
        if (!confirms || confirms.release || !confirms.ids.includes(message.id)) continue;
        if (message.historyNotification) confirms.awaitsHistory = true;
        else this.release(frame);
      }
    }
    void this.drain();
  }

  /** A history batch was handed to the mapper. */
  historyArrived(): void {
    for (const frame of this.queue) if (frame.confirms?.awaitsHistory && !frame.confirms.release) this.release(frame);
    void this.drain();
  }

  /**
   * No frame sent from now on leaves before `write` settles (credentials Baileys may use on the wire at once). Its
   * failure holds them for good: whoever made the write drops the connection.
   */
  holdUntil(write: Promise<unknown>): void {
    if (this.aborted || this.stopped) return;
    this.queue.push({ data: undefined, options: undefined, hold: write });
    void this.drain();
  }

  /** The socket is let go: nothing held leaves any more (what it confirms is delivered again). */
  close(): void {
    this.stopped = true;
    this.discard();
  }

  private holdsConfirmations(): boolean {
    return this.queue.some((frame) => frame.confirms && !frame.confirms.release);
  }

  private send(data: unknown, options: unknown, cb: SendCallback | undefined): void {
    const ids = this.nextConfirms;
    this.nextConfirms = undefined;
    if (this.aborted || this.stopped) {
      cb?.();
      return;
    }
    if (!ids && !this.queue.length) {
      this.rawSend!(data, options, cb);
      return;
    }
    const frame: Frame = { data, options };
    this.queue.push(frame);
    // Baileys goes on (its upsert comes after the receipt); the frame itself leaves when the gate lets it
    cb?.();
    if (!ids) return;
    const section = ids.length ? this.openSection : undefined;
    frame.confirms = { ids, ...(section ? { section } : {}) };
    frame.confirms.watchdog = setTimeout(() => this.fail(new Error(`a confirmation waited ${HOLD_LIMIT_MS / 1000} s for its commit`)), HOLD_LIMIT_MS);
    frame.confirms.watchdog.unref();
    if (section) return;
    // an ack sent after its handler emitted (receipts, notifications): those events only have to leave the buffer
    frame.confirms.release = Promise.resolve().then(() => {
      this.deps.flushEvents();
      return this.deps.committed();
    });
    frame.confirms.release.catch((err: unknown) => this.fail(err));
    void this.drain();
  }

  /** The frame's message is with the mapper: it leaves once that and its section's keys so far are committed. */
  private release(frame: Frame): void {
    const confirms = frame.confirms!;
    const staged = confirms.section?.staged;
    confirms.release = this.deps.committed(staged ? () => this.deps.commitStaged(staged) ?? undefined : undefined);
    confirms.release.catch((err: unknown) => this.fail(err));
  }

  private async section<T>(code: () => Promise<T> | T): Promise<T> {
    const section: Section = { staged: new Map() };
    this.openSection = section;
    try {
      return await this.deps.staged(section.staged, async () => code());
    } finally {
      if (this.openSection === section) this.openSection = undefined;
      this.closeSection(section);
    }
  }

  /** The section's remaining key writes commit; its confirmations still held (no upsert came: a nack) leave after. */
  private closeSection(section: Section): void {
    if (this.aborted) return;
    this.deps.flushEvents();
    const release = this.deps.committed(() => this.deps.commitStaged(section.staged) ?? undefined);
    release.catch((err: unknown) => this.fail(err));
    for (const frame of this.queue) {
      if (frame.confirms?.section === section && !frame.confirms.release) frame.confirms.release = release;
    }
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.length && !this.aborted && !this.stopped) {
        const head = this.queue[0]!;
        if (head.hold) {
          try {
            await head.hold;
          } catch {
            return; // the connection is being dropped
          }
          if (this.aborted || this.stopped) return;
          this.queue.shift();
          continue;
        }
        if (head.confirms) {
          // what it confirms has not reached the mapper yet: upserted() or closeSection() drains again
          if (!head.confirms.release) return;
          try {
            await head.confirms.release;
          } catch {
            return; // fail() has dropped the connection
          }
          if (this.aborted || this.stopped) return;
          clearTimeout(head.confirms.watchdog);
        }
        this.queue.shift();
        this.rawSend!(head.data, head.options, (err) => {
          if (err) this.deps.logger.debug({ err }, 'a released frame did not reach the socket');
        });
      }
    } finally {
      this.draining = false;
    }
  }

  private fail(err: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.discard();
    this.deps.abort(err);
  }

  private discard(): void {
    for (const frame of this.queue) clearTimeout(frame.confirms?.watchdog);
    this.queue.length = 0;
  }
}
