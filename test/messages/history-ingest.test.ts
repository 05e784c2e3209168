// The message ingest on a real SQLite store: a large history sync is written in chunks of HISTORY_CHUNK, each committed
// in its own tick with turns of the event loop between them (the daemon answers meanwhile), asks the store which of
// a chunk's media messages it holds in one query, and settles only once the last chunk is committed; a chunk that cannot
// be written rejects the event and the chunks after it are not written.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { secretBoxFor } from '../../src/auth/secret-box.js';
import type { MessagePayload } from '../../src/engine/payloads.js';
import type { MediaRecords } from '../../src/media/records.js';
import { createMessageIngest } from '../../src/messages/ingest.js';
import { createMessageActivityRepo } from '../../src/store/message-activity.js';
import { createTickTransaction, openDatabase, type SqliteDb } from '../../src/store/db.js';
import { createMessagesRepo, HISTORY_CHUNK, messageKey, type MessagesRepo } from '../../src/store/messages.js';

const BOX = secretBoxFor({ masterKey: 'svc_master_history_ingest_0123456789abcdef' });
const CHATS = ['15550990000@s.whatsapp.net', '15550990001@s.whatsapp.net', '120363000000000001@g.us'];

function historyMessage(i: number, media: boolean): MessagePayload {
  const chatId = CHATS[i % CHATS.length]!;
  return {
    messageId: `H${String(i).padStart(6, '0')}`,
    chatId,
    from: { jid: '15550990000@s.whatsapp.net' },
    fromMe: i % 2 === 0,
    isGroup: chatId.endsWith('@g.us'),
    type: media ? 'image' : 'text',
    ...(media ? { caption: `picture ${i}`, media: { mimeType: 'image/jpeg', ref: { directPath: `/p/${i}` } } } : { text: `history message ${i}` }),
    timestamp: new Date(1_700_000_000_000 + i * 1000).toISOString(),
  } as unknown as MessagePayload;
}

describe('history sync ingest', () => {
  let db: SqliteDb;
  let messages: MessagesRepo;
  /** row count of the session after each commit */
  let committedCounts: number[];
  let recorded: string[];
  let existsManyCalls: number[];
  const media = {
    record(_session: string, messageId: string) {
      recorded.push(messageId);
      return { id: `media-${messageId}`, mimeType: 'image/jpeg', size: null, filename: null };
    },
  } as unknown as MediaRecords;
  const count = () => db.sqlite.prepare("SELECT COUNT(*) FROM messages WHERE session = 's'").pluck().get() as number;

  before(() => {
    db = openDatabase(':memory:');
    const now = new Date().toISOString();
    db.sqlite.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run('s', 'sandbox', now, now);
    createTickTransaction(db, () => {}, () => committedCounts.push(count()));
    const repo = createMessagesRepo(db, BOX);
    messages = {
      ...repo,
      existsMany: (session: string, ids: string[]) => {
        existsManyCalls.push(ids.length);
        return repo.existsMany(session, ids);
      },
    };
  });
  after(() => db.close());
  beforeEach(() => {
    db.sqlite.exec("DELETE FROM messages; DROP TRIGGER IF EXISTS poison");
    committedCounts = [];
    recorded = [];
    existsManyCalls = [];
  });

  it('writes 2,500 messages in chunks of HISTORY_CHUNK, each in its own commit, yielding between them; media only for new messages', async () => {
    const ingest = createMessageIngest(messages, media, createMessageActivityRepo(db));
    const synced = Array.from({ length: 2500 }, (_, i) => historyMessage(i, i % 10 === 0));
    // one media message is stored already (received live): it keeps the record it has
    const live = synced[1500]!;
    db.tick!.join();
    messages.insert({ session: 's', chatId: live.chatId, id: live.messageId, sender: null, fromMe: true, type: 'image', text: 'live', mediaId: 'live-media', quotedId: null, status: 'sent', secret: null, extra: null, raw: null, timestamp: 1 });
    db.tick!.flush();
    committedCounts = [];

    let turns = 0;
    let done = false;
    const spin = () => {
      turns += 1;
      if (!done) setImmediate(spin);
    };
    setImmediate(spin);
    const payload: Record<string, unknown> = { syncType: 'FULL', progress: 100, messages: synced };
    const pending = ingest('s', 'history.sync', payload);
    assert.ok(pending instanceof Promise, 'a history sync is processed asynchronously');
    // nothing of a later chunk is written before the event loop has had its turn
    assert.ok(count() <= 1 + HISTORY_CHUNK);
    await pending;
    done = true;

    assert.deepEqual(payload, { syncType: 'FULL', progress: 100, messageCount: 2500, chatCount: 3 });
    assert.equal(count(), 2500);
    // each chunk was committed before the next one was written; the last one before the event settled
    const chunks = Math.ceil(2500 / HISTORY_CHUNK);
    // the live message (number 1500) is stored already: the counts after its chunk are one short of the synced ones
    const chunkOfLive = Math.floor(1500 / HISTORY_CHUNK);
    assert.deepEqual(committedCounts, Array.from({ length: chunks }, (_, k) => Math.min(2500, (k + 1) * HISTORY_CHUNK) + (k < chunkOfLive ? 1 : 0)));
    assert.ok(turns >= chunks, `the event loop turned between chunks (${turns} turns)`);
    // one existsMany per chunk, asking about its media messages only (one in ten)
    assert.deepEqual(existsManyCalls, Array.from({ length: chunks }, (_, k) => Math.ceil((Math.min(2500, (k + 1) * HISTORY_CHUNK) - k * HISTORY_CHUNK) / 10)));
    assert.equal(recorded.length, 249);
    assert.ok(!recorded.includes(live.messageId));
    const liveRow = await messages.find('s', live.messageId, live.chatId);
    assert.equal(liveRow?.mediaId, 'live-media');
    const other = synced[10]!;
    assert.equal((await messages.find('s', other.messageId, other.chatId))?.mediaId, `media-${other.messageId}`);
  });

  it('a chunk that cannot be written rejects the event; the chunks after it are not written', async () => {
    const ingest = createMessageIngest(messages, media, createMessageActivityRepo(db));
    db.sqlite.exec("CREATE TRIGGER poison BEFORE INSERT ON messages WHEN NEW.id = 'H001500' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END");
    const synced = Array.from({ length: 3500 }, (_, i) => historyMessage(i, false));
    await assert.rejects(async () => ingest('s', 'history.sync', { messages: synced }), /poisoned row/);
    await new Promise((resolve) => setImmediate(resolve));
    const stored = count();
    // H001500 is in the chunk after the first 1,500 rows' chunks
    const kept = Math.floor(1500 / HISTORY_CHUNK) * HISTORY_CHUNK;
    assert.ok(stored >= kept && stored < kept + HISTORY_CHUNK, `the chunks before the failed one are kept, nothing after it (${stored} rows)`);
  });

  it('existsMany: one query per chunk of ids, matched by chat and id', async () => {
    db.tick!.join();
    for (const [chatId, id] of [[CHATS[0]!, 'A'], [CHATS[1]!, 'B'], [CHATS[2]!, 'A']]) {
      messages.insert({ session: 's', chatId, id, sender: null, fromMe: true, type: 'text', text: 'x', mediaId: null, quotedId: null, status: 'sent', secret: null, extra: null, raw: null, timestamp: 1 });
    }
    db.tick!.flush();
    const ids = ['A', 'B', 'C', ...Array.from({ length: 2100 }, (_, i) => `none-${i}`)];
    const found = await messages.existsMany('s', ids);
    assert.deepEqual([...found].sort(), [messageKey(CHATS[0]!, 'A'), messageKey(CHATS[1]!, 'B'), messageKey(CHATS[2]!, 'A')].sort());
    assert.deepEqual(await messages.existsMany('s', []), new Set());
    assert.deepEqual(await messages.existsMany('s', ['B']), new Set([messageKey(CHATS[1]!, 'B')]));
    assert.deepEqual(await messages.existsMany('other', ['A', 'B']), new Set());
  });
});
