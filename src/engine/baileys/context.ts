// What the parts of a Baileys session (messaging, chats, events, media) share: the live socket, identities, caches, hooks.
import type { GroupMetadata, WASocket } from '@whiskeysockets/baileys';
import type { Dispatcher } from 'undici';
import { GatewayError, NetworkError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { ServerAcks } from '../server-acks.js';
import type { EngineSessionHooks, MessageRef } from '../types.js';
import type { TtlCache } from './cache.js';
import type { Identities } from './identities.js';

export interface SessionContext {
  readonly name: string;
  readonly hooks: EngineSessionHooks;
  readonly logger: Logger;
  readonly ids: Identities;
  /** group metadata by jid, refreshed on group events (Baileys' cachedGroupMetadata reads it) */
  readonly groups: Map<string, GroupMetadata>;
  /** ids of messages this engine sent (texts, edits, revokes, reactions), so their echoes are not reported twice */
  readonly ownSends: TtlCache;
  /**
   * sends under way by message id, each settled a turn of the event loop after its send returned (its caller has
   * recorded the message by then): a receipt of one of them waits, else its ack could reach the store before the row
   */
  readonly sendsInFlight: Map<string, Promise<void>>;
  /** the server's answers to the messages sent (acks, refusals, none in time) */
  readonly serverAcks: ServerAcks;
  /** history requests sent to the phone (request id → chat), so their ON_DEMAND answer names the request */
  readonly historyRequests: TtlCache;
  /** the fetch dispatcher of the session's proxy, if any */
  readonly dispatcher: Dispatcher | undefined;
  /** the open socket; waits for a reconnect the engine is doing by itself, else SESSION_NOT_CONNECTED */
  ready(): Promise<WASocket>;
  /** the open socket if there is one, without waiting */
  current(): WASocket | undefined;
  /** a message of the gateway's store */
  lookupMessage(id: string, chatId?: string): Promise<MessageRef | undefined>;
  /** own PN and LID jids (no device) */
  me(): { pn?: string; lid?: string };
  isBusiness(): boolean;
}

export const QUERY_TIMEOUT_MS = 30_000;

/** A Baileys call with our own deadline (Baileys' own query timeout resolves `undefined` instead of failing). */
export async function withTimeout<T>(work: Promise<T>, what: string, ms = QUERY_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NetworkError(`${what}: no answer from the network within ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A query result Baileys resolved as undefined (its timeout) is a network failure, not a success. */
export function required<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new NetworkError(`${what}: the network did not answer`);
  return value;
}

/** The numeric code of a Baileys error: an iq `<error code>` (Boom data) or the Boom status. */
export function errorCode(err: unknown): number | undefined {
  if (!(err instanceof Error)) return undefined;
  const data = (err as { data?: unknown }).data;
  if (typeof data === 'number') return data;
  if (data && typeof data === 'object' && 'attrs' in data) {
    const code = Number((data as { attrs: { code?: string } }).attrs.code);
    if (Number.isFinite(code)) return code;
  }
  const status = (err as { output?: { statusCode?: unknown } }).output?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/**
 * Turns a Baileys failure into a GatewayError: a closed connection → SESSION_NOT_CONNECTED, anything else from the
 * network → NETWORK_ERROR; GatewayErrors pass through. `map` names codes with a more precise meaning.
 */
export function toGatewayError(err: unknown, what: string, map: Record<number, () => GatewayError> = {}): GatewayError {
  if (err instanceof GatewayError) return err;
  const code = errorCode(err);
  if (code !== undefined && map[code]) return map[code]!();
  const message = err instanceof Error ? err.message : String(err);
  if (message === 'Connection Closed' || code === 428) return new GatewayError('SESSION_NOT_CONNECTED', `${what}: the connection closed`);
  if ((err as { isBoom?: boolean }).isBoom && code === 400) return new GatewayError('VALIDATION_FAILED', `${what}: ${message}`);
  return new NetworkError(`${what}: ${message}${code !== undefined ? ` (${code})` : ''}`, err);
}

/** A promise with its resolve and reject in hand (rejections are handled, so an unused one never crashes). */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: Error): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** `work`, or the error `onTimeout` builds after `ms`. */
export function timeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(onTimeout()), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
