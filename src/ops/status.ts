// What an operator checks when something is off, in one answer (GET /api/admin/status, `gateway doctor`): sessions by
// state and the ones needing attention, the webhook backlog and failing webhooks, the database's size, S3, backups.
import { existsSync, statSync } from 'node:fs';
import type { MediaService, StorageCheck } from '../media/service.js';
import type { OutboxRepo } from '../store/outbox.js';
import type { SessionsRepo } from '../store/sessions.js';
import { LATEST_SCHEMA_VERSION } from '../store/database-file.js';
import type { WebhookRegistry } from '../webhooks/registry.js';
import type { BackupInfo, Backups } from './backups.js';

/** sessions and failing webhooks listed at most */
const LIST_LIMIT = 100;

export interface OperationsStatus {
  version: string;
  uptimeSeconds: number;
  schemaVersion: number;
  database: { path: string; sizeBytes: number; walBytes: number };
  sessions: {
    total: number;
    byStatus: Record<string, number>;
    /** CONNECTING (pairing or reconnecting), or down after FAILED or TEMPORARY_BAN; oldest change first */
    attention: Array<{ name: string; status: string; statusReason: string | null; since: string }>;
  };
  webhooks: {
    pendingDeliveries: number;
    oldestPendingAt: string | null;
    failing: Array<{ id: number; url: string; since: string; deliveries: number; lastStatusCode: number | null; lastError: string | null }>;
  };
  s3: StorageCheck;
  backups: { count: number; last: BackupInfo | null; schedule: string };
}

export interface StatusSources {
  version: string;
  startedAt: number;
  /** the SQLite file, or the PostgreSQL URL without its password */
  store: { kind: 'sqlite' | 'postgres'; location: string };
  sessions: SessionsRepo;
  outbox: OutboxRepo;
  webhooks: WebhookRegistry;
  media: MediaService;
  backups: Backups;
  backupSchedule: string;
}

const iso = (ms: number) => new Date(ms).toISOString();
const sizeOf = (file: string) => (existsSync(file) ? statSync(file).size : 0);

export async function operationsStatus(s: StatusSources): Promise<OperationsStatus> {
  const [byStatus, unwell, backlog, allFailing, storage] = await Promise.all([
    s.sessions.countByStatus(),
    s.sessions.listUnwell(LIST_LIMIT),
    s.outbox.backlog(),
    s.outbox.failingWebhooks(),
    s.media.checkStorage(),
  ]);
  const failing = allFailing.slice(0, LIST_LIMIT);
  const backups = s.backups.list();
  return {
    version: s.version,
    uptimeSeconds: Math.round((Date.now() - s.startedAt) / 1000),
    schemaVersion: LATEST_SCHEMA_VERSION,
    database: s.store.kind === 'sqlite' ? { path: s.store.location, sizeBytes: sizeOf(s.store.location), walBytes: sizeOf(`${s.store.location}-wal`) } : { path: s.store.location, sizeBytes: 0, walBytes: 0 },
    sessions: {
      total: Object.values(byStatus).reduce((sum, n) => sum + n, 0),
      byStatus: { CONNECTED: 0, CONNECTING: 0, DISCONNECTED: 0, ...byStatus },
      attention: unwell.map((row) => ({ name: row.name, status: row.status, statusReason: row.statusReason, since: row.updatedAt })),
    },
    webhooks: {
      pendingDeliveries: backlog.pending,
      oldestPendingAt: backlog.oldestCreatedAt === null ? null : iso(backlog.oldestCreatedAt),
      failing: failing.flatMap((f) => {
        const webhook = s.webhooks.activeWebhook(f.webhookId);
        // not listed: a disabled webhook (its pending deliveries were failed on purpose), or one deleted meanwhile
        return webhook ? [{ id: f.webhookId, url: webhook.url, since: iso(f.since), deliveries: f.deliveries, lastStatusCode: f.lastStatusCode, lastError: f.lastError }] : [];
      }),
    },
    s3: storage,
    backups: { count: backups.length, last: backups[0] ?? null, schedule: s.backupSchedule },
  };
}
