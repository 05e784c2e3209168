// The console's only way to the daemon: the documented API, with the key kept in sessionStorage (never a URL or cookie),
// and the live event stream read with fetch() so the key travels in the Authorization header.
import { sseData } from '../src/events/sse.js';
import { markReachable, markUnreachable, requestRefresh } from './connection.js';

const KEY_ITEM = 'gateway.console.key';

export const storedKey = () => sessionStorage.getItem(KEY_ITEM);
export const storeKey = (key) => sessionStorage.setItem(KEY_ITEM, key);
export const forgetKey = () => sessionStorage.removeItem(KEY_ITEM);

/** An error answer of the API, as the API worded it. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Why the console signs out by itself: a 401 to the stored key. */
export const UNAUTHORIZED_REASON = 'Your key was revoked or is invalid.';

let onUnauthorized = () => {};
/** Called with the reason when the key stops working (revoked, or the daemon's master key changed). */
export const whenUnauthorized = (handler) => (onUnauthorized = handler);

/** Answers a proxy gives for a daemon that is down: treated like no answer at all. */
const GATEWAY_DOWN = new Set([502, 503, 504]);

/** One API call: resolves to {data, total} (total from X-Total-Count on lists); rejects with an ApiError. */
export async function api(method, path, body, key = storedKey()) {
  const headers = { Authorization: `Bearer ${key}` };
  const init = { method, headers, cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    markUnreachable();
    throw new ApiError(0, 'NETWORK', 'the daemon could not be reached');
  }
  if (GATEWAY_DOWN.has(response.status)) markUnreachable();
  else markReachable();
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok) throw refusal(response, json, key);
  const total = response.headers.get('X-Total-Count');
  return { data: json?.data, total: total === null ? undefined : Number(total) };
}

/** The ApiError of an error answer (a 401 to the stored key signs the tab out). */
function refusal(response, json, key) {
  const error = json?.error ?? {};
  if (response.status === 401 && key === storedKey()) onUnauthorized(UNAUTHORIZED_REASON);
  return new ApiError(response.status, error.code ?? `HTTP_${response.status}`, error.message ?? response.statusText);
}

/**
 * A file of the API as a Blob (POST …/media/{mediaId}/download), fetched with the key in the Authorization header, since
 * an <img src> cannot send it; the page shows it through an object URL.
 */
export async function fetchBlob(method, path) {
  let response;
  try {
    response = await fetch(path, { method, headers: { Authorization: `Bearer ${storedKey()}` }, cache: 'no-store' });
  } catch {
    markUnreachable();
    throw new ApiError(0, 'NETWORK', 'the daemon could not be reached');
  }
  if (GATEWAY_DOWN.has(response.status)) markUnreachable();
  else markReachable();
  if (!response.ok) throw refusal(response, await response.json().catch(() => undefined), storedKey());
  return response.blob();
}

/** Builds a query string from the defined values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** What the signed-in key may do (from GET /api/account). */
export function capabilities(account) {
  const master = account?.kind === 'master';
  const scopes = new Set(account?.scopes ?? []);
  return {
    master,
    can: (scope) => master || scopes.has('*') || scopes.has(scope),
    sessions: account?.sessions ?? null,
  };
}

/**
 * Reads GET /api/events/stream (Server-Sent Events) with fetch, since EventSource cannot send the key in a header.
 * Calls onEvent(envelope) per event and onState({live, refused, error}) as the stream opens or fails; reconnects after
 * a drop, and asks every view to load again when it reopens (events sent while it was down are not replayed).
 * A refused stream (403: the key lacks the scope) stops with `refused`, and the shell polls instead.
 * Returns a function that closes it.
 */
export function openEventStream(onEvent, onState) {
  const controller = new AbortController();
  const pause = (ms) => new Promise((done) => setTimeout(done, ms));
  (async () => {
    let opened = false;
    while (!controller.signal.aborted) {
      try {
        const response = await fetch('/api/events/stream', { headers: { Authorization: `Bearer ${storedKey()}`, Accept: 'text/event-stream' }, signal: controller.signal, cache: 'no-store' });
        if (!response.ok) {
          if (GATEWAY_DOWN.has(response.status)) markUnreachable();
          const error = (await response.json().catch(() => undefined))?.error;
          const refused = response.status === 403;
          onState({ live: false, refused, error: new ApiError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? response.statusText) });
          if (response.status === 401) onUnauthorized(UNAUTHORIZED_REASON);
          if (response.status === 401 || refused) return;
        } else {
          markReachable();
          onState({ live: true });
          if (opened) requestRefresh();
          opened = true;
          await readEvents(response.body, onEvent);
          onState({ live: false, error: new ApiError(0, 'STREAM_ENDED', 'the event stream ended; reconnecting') });
        }
      } catch (err) {
        if (controller.signal.aborted) return;
        markUnreachable();
        onState({ live: false, error: new ApiError(0, 'NETWORK', 'the event stream was cut; reconnecting') });
      }
      await pause(2000);
    }
  })();
  return () => controller.abort();
}

async function readEvents(body, onEvent) {
  for await (const data of sseData(chunksOf(body))) onEvent(JSON.parse(data));
}

/** A ReadableStream as an async iterable (not every browser iterates streams itself). */
async function* chunksOf(body) {
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    yield value;
  }
}
