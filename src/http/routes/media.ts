// Media routes (record, download, persist) and the admin settings that configure S3 and auto-persist.
import { servableMime } from '../../media/mime.js';
import { ValidationError } from '../../errors.js';
import type { RuntimeSettings, RuntimeSettingsPatch } from '../../config/runtime-settings.js';
import { mediaView } from '../../media/records.js';
import { emptyBody } from '../schemas/common.js';
import { mediaParams, settingsBody } from '../schemas/media.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

export function mediaRoutes({ mediaService, runtimeSettings }: Services): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/sessions/:session/media/:mediaId',
      access: 'media:read',
      sessionFrom: 'params',
      summary: 'the media record (without the file)',
      schema: { params: mediaParams },
      handler: ({ params }) => mediaView(mediaService.get(params.session, params.mediaId)),
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/media/:mediaId/download',
      access: 'media:read',
      sessionFrom: 'params',
      summary: 'the decrypted file, streamed with its Content-Type',
      schema: { params: mediaParams, body: emptyBody },
      async handler({ params, ctx }) {
        const content = await mediaService.open(params.session, params.mediaId);
        ctx.type = servableMime(content.mimeType);
        if (content.size !== null) ctx.length = content.size;
        ctx.attachment(content.filename);
        ctx.body = content.stream;
        return undefined;
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/media/:mediaId/persist',
      access: 'media:read',
      sessionFrom: 'params',
      summary: 'upload the file to the configured S3-compatible bucket',
      schema: { params: mediaParams, body: emptyBody },
      handler: ({ params }) => mediaService.persist(params.session, params.mediaId),
    },
    {
      method: 'GET',
      path: '/api/admin/settings',
      access: 'master',
      summary: 'run-time settings (the S3 secret is never returned)',
      schema: {},
      handler: () => runtimeSettings.view(),
    },
    {
      method: 'PUT',
      path: '/api/admin/settings',
      access: 'master',
      summary: 'change run-time settings; s3 fields merge, s3: null removes the storage',
      schema: { body: settingsBody },
      handler: ({ body }) => runtimeSettings.update(body as RuntimeSettingsPatch, checkSettings),
    },
  ];
}

function checkSettings(next: RuntimeSettings): void {
  if (!next.s3) {
    if (next.autoPersist) throw ValidationError.field('/autoPersist', 'needs S3 settings first');
    return;
  }
  for (const field of ['bucket', 'accessKeyId', 'secretAccessKey'] as const) {
    if (!next.s3[field]) throw ValidationError.field(`/s3/${field}`, 'is required for S3 storage');
  }
}
