// The Baileys engine's mapping of on-demand history (backfill): an ON_DEMAND messaging-history.set names the request it
// answers (the phone's peerDataRequestSessionId, else the request pending for its chat), and a batch far larger than any
// request is cut, as is anything posing as an answer; other history syncs name no request.
import { DEFAULT_SERVER_ACK_TIMING, ServerAcks } from '../../src/engine/server-acks.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proto, type BaileysEventMap, type WAMessage } from '@whiskeysockets/baileys';
import { TtlCache } from '../../src/engine/baileys/cache.js';
import type { SessionContext } from '../../src/engine/baileys/context.js';
import { EventMapper } from '../../src/engine/baileys/events.js';
import { Identities } from '../../src/engine/baileys/identities.js';
import type { PollVotes } from '../../src/engine/baileys/polls.js';
import { MAX_ON_DEMAND_BATCH } from '../../src/engine/types.js';
import { createLogger } from '../../src/logger.js';

const CHAT = '15550301111@s.whatsapp.net';

function mapper() {
  const emitted: Array<{ type: string; payload: Record<string, any> }> = [];
  const ctx: SessionContext = {
    name: 't',
    hooks: { connection: () => undefined, event: (type, payload) => void emitted.push({ type, payload }) },
    logger: createLogger('silent'),
    ids: new Identities(),
    groups: new Map(),
    ownSends: new TtlCache(1000),
    sendsInFlight: new Map(),
    serverAcks: new ServerAcks(DEFAULT_SERVER_ACK_TIMING, () => undefined),
    historyRequests: new TtlCache(60_000),
    dispatcher: undefined,
    ready: () => Promise.reject(new Error('unused')),
    current: () => undefined,
    lookupMessage: async () => undefined,
    me: () => ({ pn: '15550300000@s.whatsapp.net' }),
    isBusiness: () => false,
  };
  const polls = { rememberPoll() {}, decrypt: async () => undefined } as unknown as PollVotes;
  return { ctx, emitted, events: new EventMapper(ctx, polls) };
}

const messages = (count: number, chat = CHAT): WAMessage[] =>
  Array.from({ length: count }, (_, i) => ({
    key: { remoteJid: chat, fromMe: false, id: `3EB0${String(i).padStart(16, '0')}` },
    messageTimestamp: 1_700_000_000 + i,
    message: { conversation: `old ${i}` },
  }));

const set = (fields: Partial<BaileysEventMap['messaging-history.set']>): BaileysEventMap['messaging-history.set'] =>
  ({ chats: [], contacts: [], messages: [], syncType: proto.HistorySync.HistorySyncType.ON_DEMAND, progress: 100, ...fields }) as BaileysEventMap['messaging-history.set'];

describe('Baileys on-demand history', () => {
  it('names the request the phone names, with its chat', async () => {
    const { ctx, emitted, events } = mapper();
    ctx.historyRequests.set('REQ1', CHAT);
    await events.handle({ 'messaging-history.set': set({ messages: messages(3), peerDataRequestSessionId: 'REQ1' }) });
    const [sync] = emitted.filter((e) => e.type === 'history.sync');
    assert.equal(sync!.payload.syncType, 'ON_DEMAND');
    assert.equal(sync!.payload.requestId, 'REQ1');
    assert.equal(sync!.payload.chatId, CHAT);
    assert.equal(sync!.payload.messages.length, 3);
  });

  it('without a known session id: the request pending for the chat of its messages; none: no request named', async () => {
    const { ctx, emitted, events } = mapper();
    ctx.historyRequests.set('REQ2', CHAT);
    ctx.historyRequests.set(`chat:${CHAT}`, 'REQ2');
    await events.handle({ 'messaging-history.set': set({ messages: messages(2), peerDataRequestSessionId: 'SOMETHING-ELSE' }) });
    await events.handle({ 'messaging-history.set': set({ messages: messages(2, '15550302222@s.whatsapp.net') }) });
    await events.handle({ 'messaging-history.set': set({ messages: messages(2), syncType: proto.HistorySync.HistorySyncType.RECENT, peerDataRequestSessionId: 'REQ2' }) });
    const syncs = emitted.filter((e) => e.type === 'history.sync').map((e) => e.payload);
    assert.equal(syncs[0]!.requestId, 'REQ2');
    assert.equal(syncs[1]!.requestId, undefined, 'another chat: not an answer to that request');
    assert.equal(syncs[2]!.requestId, undefined, 'a RECENT sync answers no request');
    assert.equal(syncs[2]!.syncType, 'RECENT');
  });

  it(`an ON_DEMAND batch over ${MAX_ON_DEMAND_BATCH} messages is cut to ${MAX_ON_DEMAND_BATCH}; an initial sync is not`, async () => {
    const { emitted, events } = mapper();
    await events.handle({ 'messaging-history.set': set({ messages: messages(MAX_ON_DEMAND_BATCH + 700) }) });
    await events.handle({ 'messaging-history.set': set({ messages: messages(MAX_ON_DEMAND_BATCH + 700), syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP }) });
    const [onDemand, initial] = emitted.filter((e) => e.type === 'history.sync').map((e) => e.payload);
    assert.equal(onDemand!.messages.length, MAX_ON_DEMAND_BATCH);
    assert.equal(initial!.messages.length, MAX_ON_DEMAND_BATCH + 700);
  });
});
