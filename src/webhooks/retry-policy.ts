// Webhook retry settings: defaults, caps, and the delay before each retry (constant, linear, exponential).

export type RetryPolicyName = 'constant' | 'linear' | 'exponential';

export interface RetrySettings {
  /** Retries after the first try (0 = no retry). */
  attempts: number;
  delaySeconds: number;
  policy: RetryPolicyName;
}

export const RETRY_POLICY_NAMES: readonly RetryPolicyName[] = ['constant', 'linear', 'exponential'];

export const DEFAULT_RETRIES: Readonly<RetrySettings> = Object.freeze({ attempts: 3, delaySeconds: 5, policy: 'exponential' });

/** Most retries a webhook may ask for. */
export const MAX_ATTEMPTS = 20;
/** Longest single delay, in seconds (1 h); also caps every computed delay. */
export const MAX_DELAY_SECONDS = 3600;

/**
 * Seconds to wait before retry number `retryNumber` (1-based): constant d,d,d; linear d,2d,3d; exponential d,2d,4d;
 * each capped at MAX_DELAY_SECONDS. Negative or non-finite inputs are treated as 0 / 1.
 */
export function retryDelaySeconds(settings: RetrySettings, retryNumber: number): number {
  const d = Number.isFinite(settings.delaySeconds) ? Math.max(0, settings.delaySeconds) : 0;
  const n = Number.isFinite(retryNumber) ? Math.max(1, Math.floor(retryNumber)) : 1;
  let delay: number;
  switch (settings.policy) {
    case 'constant':
      delay = d;
      break;
    case 'linear':
      delay = d * n;
      break;
    case 'exponential':
      // Stop doubling once past the cap so huge retry numbers cannot overflow to Infinity.
      delay = n > 32 ? (d > 0 ? MAX_DELAY_SECONDS : 0) : d * 2 ** (n - 1);
      break;
    default:
      delay = d;
  }
  return Math.min(delay, MAX_DELAY_SECONDS);
}
