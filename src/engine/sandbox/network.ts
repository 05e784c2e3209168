// The simulated network shared by every sandbox session of one daemon: who is online under which phone number.
import { createHash } from 'node:crypto';
import type { SandboxSession } from './session.js';

/** Numbers starting with +999 are never registered; every other plausible number is a virtual contact. */
export function isRegisteredNumber(digits: string): boolean {
  return /^[1-9]\d{6,14}$/.test(digits) && !digits.startsWith('999');
}

/** A stable linked-device id for a phone number, as the real network assigns one per account. */
export function lidFor(digits: string): string {
  const hash = createHash('sha256').update(`lid:${digits}`).digest();
  return `${(hash.readBigUInt64BE(0) % 900_000_000_000_000n) + 100_000_000_000_000n}@lid`;
}

export class SandboxNetwork {
  private readonly online = new Map<string, SandboxSession>();

  attach(digits: string, session: SandboxSession): void {
    this.online.set(digits, session);
  }

  detach(digits: string, session: SandboxSession): void {
    if (this.online.get(digits) === session) this.online.delete(digits);
  }

  sessionFor(digits: string): SandboxSession | undefined {
    return this.online.get(digits);
  }
}
