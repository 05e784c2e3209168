// The sandbox engine: a simulated network inside the daemon, for integrating and testing apps with no phone.
import type { Engine, EngineSession, SessionOptions } from '../types.js';
import { SandboxNetwork } from './network.js';
import type { ServerAckTiming } from '../server-acks.js';
import { SandboxSession, type SandboxTiming } from './session.js';

export { SandboxSession, type PairRequest } from './session.js';

/** @param wireLog a file every message the network carries is appended to (one JSON line), before its send returns */
export function createSandboxEngine(timing: SandboxTiming, serverAck?: ServerAckTiming, wireLog?: string): Engine {
  const network = new SandboxNetwork(wireLog);
  return {
    name: 'sandbox',
    createSession: (options: SessionOptions) => new SandboxSession(options, network, { ...timing, ...(serverAck ? { serverAck } : {}) }),
    close: async () => {},
  };
}

export function isSandboxSession(session: EngineSession | undefined): session is SandboxSession {
  return session instanceof SandboxSession;
}
