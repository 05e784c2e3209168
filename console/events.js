// One event stream for the whole console, fanned out to the pages that listen (where the stream is refused, the shell
// polls instead: connection.js).
import { useEffect, useRef } from 'preact/hooks';

const listeners = new Set();

export function publish(event) {
  for (const listener of listeners) listener(event);
}

/** Calls `handler(event)` for every live event while the component is shown (the latest handler, without resubscribing). */
export function useEvents(handler) {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => {
    const listener = (event) => latest.current(event);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
}
