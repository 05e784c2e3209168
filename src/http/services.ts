// The services route handlers call; assembled once by src/daemon.ts.
import type { ApiKeys } from '../auth/api-keys.js';
import type { GatewayConfig } from '../config/types.js';
import type { EventBus } from '../events/bus.js';
import type { EventLog } from '../events/log.js';
import type { ChatList } from '../chats/chat-list.js';
import type { MessageHistory } from '../messages/history.js';
import type { HistoryBackfill } from '../messages/backfill.js';
import type { SessionManager } from '../sessions/manager.js';
import type { MessagingService } from '../messages/service.js';
import type { MediaSource } from '../messages/content.js';
import type { MediaRecords } from '../media/records.js';
import type { ClientRules } from '../auth/client-rules.js';
import type { ClientTokens } from '../auth/client-tokens.js';
import type { MediaService } from '../media/service.js';
import type { RuntimeSettingsStore } from '../config/runtime-settings.js';
import type { GroupsService } from '../chats/groups.js';
import type { ChannelsService } from '../chats/channels.js';
import type { PresenceService } from '../chats/presence.js';
import type { ContactsService } from '../chats/contacts.js';
import type { IdentityService } from '../chats/identities.js';
import type { ProfileService } from '../chats/profile.js';
import type { LabelsService } from '../chats/labels.js';
import type { CallsService } from '../calls/service.js';
import type { WebhookRegistry } from '../webhooks/registry.js';
import type { AuditLog } from '../audit/log.js';
import type { Backups } from '../ops/backups.js';
import type { OperationsStatus } from '../ops/status.js';
import type { Activity, ActivityWindow } from '../ops/activity.js';
import type { Cluster } from '../cluster/cluster.js';

export interface Services {
  config: GatewayConfig;
  version: string;
  startedAt: number;
  sessions: SessionManager;
  apiKeys: ApiKeys;
  bus: EventBus;
  /** the numbered, committed events: pages of the past (GET /api/events) and resumed streams */
  eventLog: EventLog;
  messaging: MessagingService;
  media: MediaRecords;
  /** where URL media is fetched through (the URL guard) */
  mediaSource: MediaSource;
  clientTokens: ClientTokens;
  clientRules: ClientRules;
  mediaService: MediaService;
  runtimeSettings: RuntimeSettingsStore;
  groups: GroupsService;
  channels: ChannelsService;
  presence: PresenceService;
  chatList: ChatList;
  history: MessageHistory;
  backfill: HistoryBackfill;
  contacts: ContactsService;
  /** phone number ↔ LID pairs */
  identities: IdentityService;
  /** the session's own profile picture */
  profile: ProfileService;
  labels: LabelsService;
  /** rejecting calls (the route; each session's config.calls policy is applied by the daemon) */
  calls: CallsService;
  /** webhook registrations, delivery log and manual retry */
  webhooks: WebhookRegistry;
  /** the cluster this daemon is a node of (store.kind: postgres); undefined on SQLite */
  cluster?: Pick<Cluster, 'status' | 'move'>;
  /** backups, the status report and the recent activity of the admin operations routes */
  operations: { backups: Backups; status(): Promise<OperationsStatus>; activity(window: ActivityWindow): Promise<Activity> };
  /** the audit log of admin actions (routes marked `audit` record into it; other admin work calls record()) */
  audit: AuditLog;
}
