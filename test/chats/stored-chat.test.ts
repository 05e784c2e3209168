// Which stored chat a LID names: the number's chat once the number is known (one chat per person), but a chat stored
// under the LID itself, before its number was learnt, stays reachable by the LID the chat list shows for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storedChatOf } from '../../src/chats/stored-chat.js';

const LID = '170000000000009@lid';
const PN = '15550000009@s.whatsapp.net';

function deps(stored: string[], pair: boolean) {
  return {
    chats: { get: async (_session: string, chatId: string) => (stored.includes(chatId) ? ({ chatId } as never) : undefined) },
    contacts: { findByLid: async () => undefined },
    identities: { find: async (_session: string, lid: string) => (pair && lid === LID ? ({ pn: PN, lid: LID } as never) : undefined) },
  };
}

test('a LID names the number\'s chat when the number is known, unless a chat is stored under the LID itself', async () => {
  assert.equal(await storedChatOf(deps([PN], true), 's', LID), PN, 'one chat per person');
  assert.equal(await storedChatOf(deps([], true), 's', LID), PN, 'a new chat is the number\'s');
  assert.equal(await storedChatOf(deps([LID], true), 's', LID), LID, 'stored under the LID before the number was learnt');
  assert.equal(await storedChatOf(deps([LID, PN], true), 's', LID), LID, 'both: each by its own id');
  assert.equal(await storedChatOf(deps([], false), 's', LID), LID, 'no number known');
  assert.equal(await storedChatOf(deps([], true), 's', PN), PN, 'a number is its own chat');
});
