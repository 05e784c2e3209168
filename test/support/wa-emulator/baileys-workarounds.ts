// Test-only workarounds for Baileys bugs that affect test processes, driven by the rules in profile.ts.
import { profile } from './profile.js';

let installed = false;

/**
 * Unrefs the timers Baileys leaks (profile.leakedTimers) so a test process exits once its sockets are closed.
 * Wraps the global setTimeout; only timers of 1 s or more whose callback source or creation stack match are touched,
 * and unref only stops them from holding the process open (they still fire while anything else keeps it alive).
 */
export function unrefLeakedBaileysTimers(): void {
  if (installed) return;
  installed = true;
  const original = globalThis.setTimeout;
  const patched = function setTimeout(callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) {
    const timer = original(callback, ms, ...args);
    if (typeof callback === 'function' && (ms ?? 0) >= 1_000 && isLeaky(callback)) timer.unref();
    return timer;
  };
  globalThis.setTimeout = Object.assign(patched, original) as typeof globalThis.setTimeout;
}

function isLeaky(callback: (...args: unknown[]) => void): boolean {
  let stack: string | undefined;
  for (const rule of profile.leakedTimers) {
    if (rule.source && callback.toString().includes(rule.source)) return true;
    if (rule.stack) {
      stack ??= new Error().stack ?? '';
      if (stack.includes(rule.stack) && stack.includes('@whiskeysockets/baileys')) return true;
    }
  }
  return false;
}
