// The sandbox engine: a simulated network inside the daemon, for integrating and testing apps with no phone.
import type { Engine, EngineSession, SessionOptions } from '../types.js';
import { SandboxNetwork } from './network.js';
import type { ServerAckTiming } from '../server-acks.js';
import { SandboxSession, type SandboxTiming } from './session.js';

export { SandboxSession, type PairRequest } from './session.js';

export function createSandboxEngine(timing: SandboxTiming, serverAck?: ServerAckTiming): Engine {
  const network = new SandboxNetwork();
  return {
    name: 'sandbox',
    createSession: (options: SessionOptions) => new SandboxSession(options, network, { ...timing, ...(serverAck ? { serverAck } : {}) }),
    close: async () => {},
  };
}

export function isSandboxSession(session: EngineSession | undefined): session is SandboxSession {
  return session instanceof SandboxSession;
}
