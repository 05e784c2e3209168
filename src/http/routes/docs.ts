// GET /docs: the API reference page, and the files it loads (src/http/docs/page.ts), served from swagger-ui-dist.
import { GatewayError } from '../../errors.js';
import { ASSETS_PATH, DOCS_CSP, docsAsset, docsHtml } from '../docs/page.js';
import type { Services } from '../services.js';
import type { AppContext, RouteDef } from '../types.js';

const YEAR_SECONDS = 365 * 24 * 3600;

function pageHeaders(ctx: AppContext): void {
  ctx.set('Content-Security-Policy', DOCS_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
}

export function docsRoutes({ config }: Services): RouteDef[] {
  // the page shows the document, so it is as open as the document (docs.public)
  const access = config.docs.public ? 'public' : 'key';
  return [
    {
      method: 'GET',
      path: '/docs',
      operationId: 'getReferencePage',
      responses: { 200: { raw: { contentType: 'text/html', schema: { type: 'string' } }, description: 'the reference page; its Content-Security-Policy allows only this origin' } },
      access,
      summary: 'the API reference page (HTML, rendered from /api/openapi.json; no key needed unless docs.public: false)',
      schema: {},
      handler({ ctx }) {
        pageHeaders(ctx);
        ctx.set('Cache-Control', 'no-cache');
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = docsHtml();
        return undefined;
      },
    },
    {
      method: 'GET',
      path: `${ASSETS_PATH}/:file`,
      operationId: 'getReferencePageAsset',
      responses: { 200: { raw: { contentType: 'application/octet-stream', schema: { type: 'string', format: 'binary' } }, description: 'a script, style sheet or image of the page, with its own Content-Type; cached for a year' } },
      access,
      summary: "a file of the API reference page (swagger-ui's scripts and styles, the page's initializer)",
      schema: {
        params: { type: 'object', required: ['file'], properties: { file: { type: 'string', minLength: 1, maxLength: 64 } } },
        query: { type: 'object', additionalProperties: false, properties: { v: { type: 'string', maxLength: 32 } } },
      },
      handler({ params, ctx }) {
        const asset = docsAsset((params as { file: string }).file);
        if (!asset) throw new GatewayError('NOT_FOUND', `the reference page has no file ${(params as { file: string }).file}`);
        pageHeaders(ctx);
        ctx.set('Cache-Control', `public, max-age=${YEAR_SECONDS}, immutable`);
        ctx.type = asset.contentType;
        ctx.body = asset.body;
        return undefined;
      },
    },
  ];
}
