// The Baileys engine's messenger over a stand-in socket: the send path as the engine runs it, with whatever the test's
// socket does with what the messenger hands to Baileys (usually Baileys' own generateWAMessage).
import type { Logger } from 'pino';
import { BaileysMessenger } from '../../src/engine/baileys/send.js';
import type { SessionContext } from '../../src/engine/baileys/context.js';

export function messengerOver(name: string, sock: object, logger: Logger): BaileysMessenger {
  const ctx = {
    name,
    logger,
    ownSends: { set() {}, del() {}, has: () => false },
    sendsInFlight: new Map(),
    ids: { pnOf: (jid: string) => jid, lidOf: () => '99999999999999@lid', remember() {} },
    ready: async () => sock,
    current: () => sock,
  } as unknown as SessionContext;
  return new BaileysMessenger(ctx);
}
