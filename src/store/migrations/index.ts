// The ordered list of schema migrations; a new one is appended, never edited once released.
import foundation from './001-foundation.js';
import webhooks from './002-webhooks.js';
import messages from './003-messages.js';
import clientTokens from './004-client-tokens.js';
import chats from './005-chats.js';
import keyOwners from './006-key-owners.js';
import sessionTruth from './007-session-truth.js';
import auditLog from './008-audit-log.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  { version: 1, name: 'foundation', sql: foundation },
  { version: 2, name: 'webhooks', sql: webhooks },
  { version: 3, name: 'messages', sql: messages },
  { version: 4, name: 'client-tokens', sql: clientTokens },
  { version: 5, name: 'chats', sql: chats },
  { version: 6, name: 'key-owners', sql: keyOwners },
  { version: 7, name: 'session-truth', sql: sessionTruth },
  { version: 8, name: 'audit-log', sql: auditLog },
];
