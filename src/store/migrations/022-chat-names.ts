// Chat actions and history-synced chats (issue 30): a chat's own name, as WhatsApp names it when the session knows no
// contact for it: a group's subject (from group events), or the name a history sync gives the conversation.
export default `
ALTER TABLE chats ADD COLUMN name TEXT;
`;

/** The same on PostgreSQL. */
export const postgres = `
ALTER TABLE chats ADD COLUMN name TEXT;
`;
