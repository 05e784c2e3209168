// The Baileys engine's messenger over a stand-in socket: the send path as the engine runs it, with whatever the test's
// socket does with what the messenger hands to Baileys (usually Baileys' own generateWAMessage).
import type { Logger } from 'pino';
import { BaileysMessenger } from '../../src/engine/baileys/send.js';
import type { SessionContext } from '../../src/engine/baileys/context.js';
import { ServerAcks } from '../../src/engine/server-acks.js';

export function messengerOver(name: string, sock: object, logger: Logger): BaileysMessenger {
  const ctx = {
    name,
    logger,
    ownSends: { set() {}, del() {}, has: () => false },
    sendsInFlight: new Map(),
    // a stand-in socket acks nothing: sends answer pending at once
    serverAcks: new ServerAcks({ waitMs: 0, timeoutMs: 60_000 }, () => undefined),
    ids: { pnOf: (jid: string) => jid, lidOf: () => '99999999999999@lid', remember() {} },
    ready: async () => sock,
    current: () => sock,
  } as unknown as SessionContext;
  return new BaileysMessenger(ctx);
}
