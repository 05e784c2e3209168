// Per-session decryption counters of the sessions this daemon runs (in memory, since it started running them): the
// `decryption` object of GET /api/sessions/{session}; the same signals feed the Prometheus counters (src/metrics.ts).
import { DECRYPTION_FAILURE_KINDS, type DecryptionFailureKind, type DecryptionSignal } from '../engine/decryption.js';
import { isoTimestamp } from '../timestamp.js';

export interface DecryptionCounts {
  /** retry receipts the session sent: it could not decrypt a message and asked the sender for it again */
  retryReceiptsSent: number;
  /** retry receipts the session received: a recipient could not decrypt one of its messages and asked again */
  retryReceiptsReceived: number;
  /** messages that could not be decrypted, by the kind of the first failure */
  failures: Record<DecryptionFailureKind, number>;
  /** messages whose retries were exhausted: incoming (message.undecryptable), outgoing (message.failed) */
  retriesExhausted: { incoming: number; outgoing: number };
  /** when counting started (ISO 8601): the session's first start in this daemon process */
  since: string;
}

export class DecryptionCounters {
  private readonly bySession = new Map<string, DecryptionCounts>();

  record(session: string, signal: DecryptionSignal): void {
    const counts = this.counts(session);
    switch (signal.kind) {
      case 'retry_receipt':
        if (signal.direction === 'sent') counts.retryReceiptsSent += 1;
        else counts.retryReceiptsReceived += 1;
        return;
      case 'failure':
        counts.failures[signal.failure] += 1;
        return;
      case 'exhausted':
        counts.retriesExhausted[signal.direction] += 1;
        return;
    }
  }

  /** Starts counting for a session (at its start), so its counters show zeros rather than nothing. */
  open(session: string): void {
    this.counts(session);
  }

  /** A copy of the session's counters; undefined for a session this daemon has not run. */
  of(session: string): DecryptionCounts | undefined {
    const counts = this.bySession.get(session);
    return counts && structuredClone(counts);
  }

  forget(session: string): void {
    this.bySession.delete(session);
  }

  private counts(session: string): DecryptionCounts {
    let counts = this.bySession.get(session);
    if (!counts) {
      counts = {
        retryReceiptsSent: 0,
        retryReceiptsReceived: 0,
        failures: Object.fromEntries(DECRYPTION_FAILURE_KINDS.map((kind) => [kind, 0])) as Record<DecryptionFailureKind, number>,
        retriesExhausted: { incoming: 0, outgoing: 0 },
        since: isoTimestamp(),
      };
      this.bySession.set(session, counts);
    }
    return counts;
  }
}
