// Media routes (record, download, persist) and the admin settings that configure S3 and auto-persist.
import { safeMime } from '../../media/mime.js';
import { ValidationError } from '../../errors.js';
import type { RuntimeSettings, RuntimeSettingsPatch } from '../../config/runtime-settings.js';
import { checkTargetUrl, type UrlPolicy } from '../../net/url-guard.js';
import { mediaView } from '../../media/records.js';
import { emptyBody } from '../schemas/common.js';
import { mediaParams, settingsBody } from '../schemas/media.js';
import type { Services } from '../services.js';
import { ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

export function mediaRoutes({ mediaService, runtimeSettings, config }: Services): RouteDef[] {
  const endpointPolicy = { allowPrivateTargets: config.media.s3AllowPrivateEndpoint };
  return [
    {
      method: 'GET',
      path: '/api/sessions/:session/media/:mediaId',
      operationId: 'getMedia',
      responses: { 200: { data: ref('MediaRecord') } },
      access: 'media:read',
      sessionFrom: 'params',
      summary: 'the media record (without the file)',
      schema: { params: mediaParams },
      handler: async ({ params }) => mediaView(await mediaService.get(params.session, params.mediaId)),
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/media/:mediaId/download',
      operationId: 'downloadMedia',
      // the file is served with its own type (image/jpeg, audio/ogg, application/pdf…): any type can come back
      responses: { 200: { raw: { contentType: '*/*', schema: { type: 'string', format: 'binary' } }, description: 'the decrypted file, with its own Content-Type (the media record\'s mimeType) and Content-Disposition' } },
      access: 'media:read',
      sessionFrom: 'params',
      summary: 'the decrypted file, streamed with its Content-Type',
      schema: { params: mediaParams, body: emptyBody },
      async handler({ params, ctx }) {
        const content = await mediaService.open(params.session, params.mediaId);
        ctx.type = safeMime(content.mimeType);
        if (content.size !== null) ctx.length = content.size;
        ctx.attachment(content.filename);
        ctx.body = content.stream;
        return undefined;
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/media/:mediaId/persist',
      operationId: 'persistMedia',
      responses: { 200: { data: ref('PersistResult') } },
      access: 'media:read',
      sessionFrom: 'params',
      summary: 'upload the file to the configured S3-compatible bucket',
      schema: { params: mediaParams, body: emptyBody },
      handler: ({ params }) => mediaService.persist(params.session, params.mediaId),
    },
    {
      method: 'GET',
      path: '/api/admin/settings',
      operationId: 'getSettings',
      responses: { 200: { data: ref('Settings') } },
      access: 'master',
      summary: 'run-time settings (the S3 secret is never returned)',
      schema: {},
      handler: () => runtimeSettings.view(),
    },
    {
      method: 'PUT',
      path: '/api/admin/settings',
      operationId: 'updateSettings',
      responses: { 200: { data: ref('Settings') } },
      access: 'master',
      audit: { action: 'settings.update', details: ({ body }) => ({ fields: settingFields(body as RuntimeSettingsPatch) }) },
      summary: 'change run-time settings; s3 fields merge, s3: null removes the storage',
      schema: { body: settingsBody },
      rulesBeyondSchema: [
        { path: '/s3/bucket', rule: 'is required while no S3 storage is stored' },
        { path: '/s3/accessKeyId', rule: 'is required while no S3 storage is stored' },
        { path: '/s3/secretAccessKey', rule: 'is required while no S3 storage is stored' },
        { path: '/autoPersist', rule: 'true needs S3 settings, stored or in this body' },
        { path: '/s3/endpoint', rule: 'must be a public host unless media.s3AllowPrivateEndpoint is set' },
      ],
      handler: ({ body }) => runtimeSettings.update(body as RuntimeSettingsPatch, (next) => checkSettings(next, endpointPolicy)),
    },
  ];
}

function checkSettings(next: RuntimeSettings, endpointPolicy: UrlPolicy): void {
  if (!next.s3) {
    if (next.autoPersist) throw ValidationError.field('/autoPersist', 'needs S3 settings first');
    return;
  }
  for (const field of ['bucket', 'accessKeyId', 'secretAccessKey'] as const) {
    if (!next.s3[field]) throw ValidationError.field(`/s3/${field}`, 'is required for S3 storage');
  }
  if (next.s3.endpoint !== undefined) {
    // a private endpoint (a local MinIO) needs media.s3AllowPrivateEndpoint; connections are checked again when made
    try {
      checkTargetUrl(next.s3.endpoint, endpointPolicy, 'MEDIA_URL_REJECTED');
    } catch (err) {
      const why = (err as { details?: Array<{ message: string }> }).details?.[0]?.message ?? (err as Error).message;
      throw ValidationError.field('/s3/endpoint', `${why}${endpointPolicy.allowPrivateTargets ? '' : ' (set media.s3AllowPrivateEndpoint for a local S3 server)'}`);
    }
  }
}

/** The settings a change names, `s3` fields one by one (`s3.secretAccessKey`): names only, never their values. */
function settingFields(patch: RuntimeSettingsPatch): string[] {
  return Object.entries(patch).flatMap(([name, value]) =>
    name === 's3' && value !== null && typeof value === 'object' ? Object.keys(value).map((field) => `s3.${field}`) : [name],
  );
}
