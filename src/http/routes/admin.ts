// Operations routes (master key): take, list and download backups of the database; the status report `gateway doctor` reads;
// the recent activity the console's overview charts.
import { activityQuery, createBackupBody, backupParams, type ActivityQuery, type CreateBackupBody } from '../schemas/admin.js';
import { paging } from '../schemas/common.js';
import { paged } from '../respond.js';
import { listOf, ref } from '../schemas/resources.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

export function adminRoutes({ operations }: Services): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/admin/backups',
      operationId: 'createBackup',
      responses: { 201: { data: ref('Backup') } },
      access: 'master',
      summary: 'back the database up into <dataDir>/backups now (online: the daemon keeps serving), optionally with the media blobs',
      audit: { action: 'backup.create', target: ({ data }) => data?.name, details: ({ body }) => ({ withMedia: body?.withMedia ?? false }) },
      schema: { body: createBackupBody },
      example: { body: { withMedia: false } },
      async handler({ body, ctx }) {
        const backup = await operations.backups.create({ withMedia: (body as CreateBackupBody | undefined)?.withMedia ?? false });
        ctx.status = 201;
        return backup;
      },
    },
    {
      method: 'GET',
      path: '/api/admin/backups',
      operationId: 'listBackups',
      responses: { 200: { data: listOf('Backup') } },
      access: 'master',
      summary: 'the backups in <dataDir>/backups, newest first',
      schema: { query: paging },
      handler({ query, ctx }) {
        const all = operations.backups.list();
        const offset = query.offset ?? 0;
        return paged(ctx, all.slice(offset, offset + (query.limit ?? 1000)), all.length);
      },
    },
    {
      method: 'GET',
      path: '/api/admin/backups/:name',
      operationId: 'downloadBackup',
      responses: { 200: { raw: { contentType: 'application/octet-stream', schema: { type: 'string', format: 'binary' } }, description: 'the backup file (an SQLite database)' } },
      access: 'master',
      summary: 'download a backup file',
      schema: { params: backupParams },
      handler({ params, ctx }) {
        const file = operations.backups.open(params.name);
        ctx.type = 'application/octet-stream';
        ctx.length = file.size;
        ctx.attachment(params.name);
        // the whole database: no cache between here and the operator may keep a copy
        ctx.set('Cache-Control', 'no-store');
        ctx.body = file.stream;
        return undefined;
      },
    },
    {
      method: 'GET',
      path: '/api/admin/status',
      operationId: 'getOperationsStatus',
      responses: { 200: { data: ref('OperationsStatus') } },
      access: 'master',
      summary: 'sessions needing attention, webhook backlog and failing webhooks, database size, S3 reachability, backups',
      schema: {},
      handler: () => operations.status(),
    },
    {
      method: 'GET',
      path: '/api/admin/activity',
      operationId: 'getRecentActivity',
      responses: { 200: { data: ref('Activity') } },
      access: 'master',
      summary: 'per minute over the last hour (or 15 or 30 minutes): messages in and out, webhook deliveries succeeded and failed, and failures per webhook',
      schema: { query: activityQuery },
      example: {
        data: {
          window: '15m',
          bucketSeconds: 60,
          from: '2026-11-27T15:46:00.000Z',
          to: '2026-11-27T16:01:00.000Z',
          messagesIn: [0, 2, 5, 1, 0, 0, 3, 4, 0, 0, 1, 0, 0, 2, 1],
          messagesOut: [1, 1, 4, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 1, 0],
          deliveriesSucceeded: [1, 3, 9, 1, 0, 0, 5, 6, 0, 0, 1, 0, 1, 3, 1],
          deliveriesFailed: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
          totals: { messagesIn: 19, messagesOut: 12, deliveriesSucceeded: 31, deliveriesFailed: 2 },
          webhooks: [
            { id: 1, url: 'https://crm.example.com/whatsapp', enabled: true, failed: 0 },
            { id: 2, url: 'https://bot.example.com/hook', enabled: true, failed: 2 },
          ],
        },
      },
      handler: ({ query }) => operations.activity((query as ActivityQuery).window),
    },
  ];
}
