// One webhook HTTP attempt: POST the exact body through a (guarded) undici dispatcher and report the outcome; never throws.

import type { Dispatcher } from 'undici';

/** Where a delivery goes, parsed once per webhook rather than once per attempt. */
export interface DeliveryTarget {
  origin: string;
  /** path and query */
  path: string;
}

export function deliveryTarget(url: string): DeliveryTarget {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

export interface DeliveryRequest {
  url: string | DeliveryTarget;
  body: Buffer;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface DeliveryOutcome {
  ok: boolean;
  statusCode?: number;
  error?: string;
  durationMs: number;
}

/** Response bodies are read (to free the connection for reuse) up to this size, then the socket is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_ERROR_LENGTH = 500;

function describeError(err: unknown, timeoutMs: number): string {
  if (!(err instanceof Error)) return String(err).slice(0, MAX_ERROR_LENGTH);
  const code = (err as NodeJS.ErrnoException).code;
  if (err.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return `timed out after ${timeoutMs} ms`;
  }
  let message = err.message;
  // Happy-eyeballs failures arrive as an AggregateError with an empty message.
  if (message === '' && err instanceof AggregateError && err.errors.length > 0) {
    const first: unknown = err.errors[0];
    message = first instanceof Error ? first.message : String(first);
  }
  if (message === '') message = code ?? err.name;
  return message.slice(0, MAX_ERROR_LENGTH);
}

/**
 * POSTs `req.body` byte for byte with `req.headers` to `req.url`. Redirects are not followed (a 3xx is a failure
 * carrying its status); only 2xx is ok. The wait for the response headers and the read of the response body are each
 * bounded by `req.timeoutMs` (the connect timeout is the dispatcher's). No AbortSignal per request: undici's own
 * timers and one plain timer for the body cost a fraction of what a signal does at thousands of deliveries a second.
 */
export async function postDelivery(dispatcher: Dispatcher, req: DeliveryRequest): Promise<DeliveryOutcome> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  try {
    const target = typeof req.url === 'string' ? deliveryTarget(req.url) : req.url;
    const res = await dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: 'POST',
      body: req.body,
      headers: req.headers,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    });
    // most receivers answer an empty 200 or a 204: nothing to wait for, so no timer to set and clear
    const empty = res.statusCode === 204 || res.statusCode === 304 || res.headers['content-length'] === '0';
    const bodyDeadline = empty ? undefined : setTimeout(() => res.body.destroy(), Math.max(1, req.timeoutMs - elapsed()));
    try {
      await res.body.dump({ limit: MAX_RESPONSE_BYTES });
    } catch {
      // The status has arrived; a slow or oversized response body does not change the outcome.
    } finally {
      clearTimeout(bodyDeadline);
    }
    const statusCode = res.statusCode;
    if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode, durationMs: elapsed() };
    const error = statusCode >= 300 && statusCode < 400 ? `redirect (HTTP ${statusCode}) not followed` : `HTTP ${statusCode}`;
    return { ok: false, statusCode, error, durationMs: elapsed() };
  } catch (err) {
    return { ok: false, error: describeError(err, req.timeoutMs), durationMs: elapsed() };
  }
}
