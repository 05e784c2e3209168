// Whether the daemon answers, and the "look again" signal every loaded view listens to. A failed request or a cut event
// stream marks the daemon unreachable; a health probe then retries with backoff until it answers, and its return (or the
// event stream reopening after a drop, or the poll that stands in for a refused stream) asks every view to load again.
import { useEffect, useRef, useState } from 'preact/hooks';

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 5000;

let reachable = true;
let probing = false;
const stateListeners = new Set();
const refreshListeners = new Set();

export const isReachable = () => reachable;

/** Every loaded view fetches again (the daemon came back, the stream reopened, or the fallback poll ticked). */
export function requestRefresh() {
  for (const listener of refreshListeners) listener();
}

export function markReachable() {
  if (reachable) return;
  reachable = true;
  for (const listener of stateListeners) listener(true);
  requestRefresh();
}

export function markUnreachable() {
  if (!reachable) return;
  reachable = false;
  for (const listener of stateListeners) listener(false);
  probe();
}

/** Asks GET /api/health (no key needed) with a growing pause until the daemon answers. */
async function probe() {
  if (probing) return;
  probing = true;
  let pause = FIRST_RETRY_MS;
  while (!reachable) {
    await new Promise((done) => setTimeout(done, pause));
    pause = Math.min(pause * 2, MAX_RETRY_MS);
    try {
      const response = await fetch('/api/health', { cache: 'no-store' });
      if (response.ok) markReachable();
    } catch {
      // still down
    }
  }
  probing = false;
}

/** True while the daemon answers; re-renders the component when that changes. */
export function useReachable() {
  const [value, setValue] = useState(reachable);
  useEffect(() => {
    stateListeners.add(setValue);
    setValue(reachable);
    return () => stateListeners.delete(setValue);
  }, []);
  return value;
}

/** Calls `handler()` on every refresh request while the component is shown. */
export function useRefresh(handler) {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => {
    const listener = () => latest.current();
    refreshListeners.add(listener);
    return () => refreshListeners.delete(listener);
  }, []);
}
