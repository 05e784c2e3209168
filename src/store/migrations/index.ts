// The ordered list of schema migrations; a new one is appended, never edited once released.
import foundation, { postgres as foundationPg } from './001-foundation.js';
import webhooks, { postgres as webhooksPg } from './002-webhooks.js';
import messages, { postgres as messagesPg } from './003-messages.js';
import clientTokens, { postgres as clientTokensPg } from './004-client-tokens.js';
import chats, { postgres as chatsPg } from './005-chats.js';
import keyOwners, { postgres as keyOwnersPg } from './006-key-owners.js';
import sessionTruth, { postgres as sessionTruthPg } from './007-session-truth.js';
import auditLog, { postgres as auditLogPg } from './008-audit-log.js';
import cluster, { postgres as clusterPg } from './009-cluster.js';
import deliveryClaims, { postgres as deliveryClaimsPg } from './010-delivery-claims.js';
import leaseWithoutSessionKey, { postgres as leaseWithoutSessionKeyPg } from './011-lease-without-session-key.js';
import auditRepeats, { postgres as auditRepeatsPg } from './012-audit-repeats.js';
import webhookOwners, { postgres as webhookOwnersPg } from './013-webhook-owners.js';
import eventFanouts, { postgres as eventFanoutsPg } from './014-event-fanouts.js';
import activityIndexes, { postgres as activityIndexesPg } from './015-activity-indexes.js';
import eventLog, { postgres as eventLogPg } from './016-event-log.js';
import idempotency, { postgres as idempotencyPg } from './017-idempotency.js';
import chatList, { postgres as chatListPg } from './018-chats.js';
import historySearch, { postgres as historySearchPg } from './019-history-search.js';
import messageActivity, { postgres as messageActivityPg } from './020-message-activity.js';
import identityOrigin, { postgres as identityOriginPg } from './021-identity-origin.js';
import chatNames, { postgres as chatNamesPg } from './022-chat-names.js';
import sendQueue, { postgres as sendQueuePg } from './023-send-queue.js';

export interface Migration {
  version: number;
  name: string;
  /** SQLite (the embedded default) */
  sql: string;
  /** the same schema change on PostgreSQL: a migration ships both, so the two stores never drift apart */
  postgres: string;
}

export const MIGRATIONS: Migration[] = [
  { version: 1, name: 'foundation', sql: foundation, postgres: foundationPg },
  { version: 2, name: 'webhooks', sql: webhooks, postgres: webhooksPg },
  { version: 3, name: 'messages', sql: messages, postgres: messagesPg },
  { version: 4, name: 'client-tokens', sql: clientTokens, postgres: clientTokensPg },
  { version: 5, name: 'chats', sql: chats, postgres: chatsPg },
  { version: 6, name: 'key-owners', sql: keyOwners, postgres: keyOwnersPg },
  { version: 7, name: 'session-truth', sql: sessionTruth, postgres: sessionTruthPg },
  { version: 8, name: 'audit-log', sql: auditLog, postgres: auditLogPg },
  { version: 9, name: 'cluster', sql: cluster, postgres: clusterPg },
  { version: 10, name: 'delivery-claims', sql: deliveryClaims, postgres: deliveryClaimsPg },
  { version: 11, name: 'lease-without-session-key', sql: leaseWithoutSessionKey, postgres: leaseWithoutSessionKeyPg },
  { version: 12, name: 'audit-repeats', sql: auditRepeats, postgres: auditRepeatsPg },
  { version: 13, name: 'webhook-owners', sql: webhookOwners, postgres: webhookOwnersPg },
  { version: 14, name: 'event-fanouts', sql: eventFanouts, postgres: eventFanoutsPg },
  { version: 15, name: 'activity-indexes', sql: activityIndexes, postgres: activityIndexesPg },
  { version: 16, name: 'event-log', sql: eventLog, postgres: eventLogPg },
  { version: 17, name: 'idempotency', sql: idempotency, postgres: idempotencyPg },
  { version: 18, name: 'chat-list', sql: chatList, postgres: chatListPg },
  { version: 19, name: 'history-search', sql: historySearch, postgres: historySearchPg },
  { version: 20, name: 'message-activity', sql: messageActivity, postgres: messageActivityPg },
  { version: 21, name: 'identity-origin', sql: identityOrigin, postgres: identityOriginPg },
  { version: 22, name: 'chat-names', sql: chatNames, postgres: chatNamesPg },
  { version: 23, name: 'send-queue', sql: sendQueue, postgres: sendQueuePg },
];
