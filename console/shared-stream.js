// One event stream for every console tab of a browser signed in with the same key. A browser opens at most six HTTP/1.1
// connections to a host and each stream holds one for good, so with a stream per tab the seventh tab's requests would
// wait for ever. The tab holding a Web Lock reads the stream and relays it over a BroadcastChannel; when that tab
// closes or signs out, the lock passes to another tab, which opens the stream. Without Web Locks (a page not served
// from https or loopback) each tab keeps a stream of its own.
import { ApiError, openEventStream, storedKey } from './api.js';
import { markReachable, markUnreachable, requestRefresh } from './connection.js';

/** Same contract as openEventStream: onEvent(envelope), onState({live, refused, error}); returns a function that closes it. */
export function openSharedEventStream(onEvent, onState) {
  if (!globalThis.navigator?.locks || typeof BroadcastChannel !== 'function' || !globalThis.crypto?.subtle) return openEventStream(onEvent, onState);
  const controller = new AbortController();
  let channel;
  let lastState;
  let heardLive = false;
  const follow = ({ data }) => {
    if (data.event) onEvent(data.event);
    else if (data.state) followState(data.state);
    else if (data.refresh) requestRefresh();
    else if (data.hello && lastState) channel.postMessage({ state: lastState });
  };
  // the leader's stream marked its own tab reachable or not and asked it to refresh; a follower does the same here
  const followState = (wire) => {
    const state = { ...wire, error: wire.error && new ApiError(wire.error.status, wire.error.code, wire.error.message) };
    if (state.live) {
      markReachable();
      if (heardLive === 'dropped') requestRefresh();
      heardLive = true;
    } else if (heardLive) {
      heardLive = 'dropped';
      if (state.error?.status === 0) markUnreachable();
    }
    onState(state);
  };
  // a tab taking the stream over from one that closed: what was sent in between is loaded again, in every tab
  const lead = () =>
    new Promise((release) => {
      let takingOver = Boolean(heardLive);
      const close = openEventStream(
        (event) => {
          onEvent(event);
          channel.postMessage({ event });
        },
        (state) => {
          lastState = { ...state, error: state.error && { status: state.error.status, code: state.error.code, message: state.error.message } };
          onState(state);
          channel.postMessage({ state: lastState });
          if (state.live && takingOver) {
            takingOver = false;
            requestRefresh();
            channel.postMessage({ refresh: true });
          }
        },
      );
      controller.signal.addEventListener('abort', () => (close(), release()), { once: true });
    });
  (async () => {
    const name = `gateway-console-events:${await fingerprint(storedKey() ?? '')}`;
    if (controller.signal.aborted) return;
    channel = new BroadcastChannel(name);
    channel.onmessage = follow;
    channel.postMessage({ hello: true });
    await navigator.locks.request(name, { signal: controller.signal }, lead).catch(() => {});
  })();
  return () => {
    controller.abort();
    channel?.close();
  };
}

/** Tabs share a stream only with tabs holding the same key; the channel is named by the key's digest, never the key. */
async function fingerprint(key) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key));
  return [...new Uint8Array(digest).slice(0, 12)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
