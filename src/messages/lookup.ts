// The stored-message lookup engines use (quotes, edits, reactions): a message row as the engine's MessageRef.
import type { MessageRef } from '../engine/types.js';
import type { MessagesRepo } from '../store/messages.js';

export function createMessageLookup(messages: MessagesRepo): (session: string, id: string, chatId?: string) => Promise<MessageRef | undefined> {
  return async function lookupMessage(session, id, chatId) {
    const row = await messages.find(session, id, chatId);
    return (
      row && {
        id: row.id,
        chatId: row.chatId,
        fromMe: row.fromMe,
        ...(row.sender ? { participant: row.sender } : {}),
        type: row.type,
        ...(row.text ? { text: row.text } : {}),
        ...(row.raw ? { raw: JSON.parse(row.raw) } : {}),
      }
    );
  };
}
