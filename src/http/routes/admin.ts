// Operations routes (master key): take, list and download backups of the database; the status report `gateway doctor` reads.
import { createBackupBody, backupParams, type CreateBackupBody } from '../schemas/admin.js';
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
  ];
}
