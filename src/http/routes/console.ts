// GET /console: the web console (src/http/console/assets.ts), a static page that calls the documented API with the key
// the operator types in. Absent (404) when console.enabled is false.
import { GatewayError } from '../../errors.js';
import { CONSOLE_ASSETS_PATH, CONSOLE_CSP, CONSOLE_PATH, consoleAsset, consolePage } from '../console/assets.js';
import type { Services } from '../services.js';
import type { AppContext, RouteDef } from '../types.js';

const YEAR_SECONDS = 365 * 24 * 3600;

function pageHeaders(ctx: AppContext): void {
  ctx.set('Content-Security-Policy', CONSOLE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
}

export function consoleRoutes({ config }: Services): RouteDef[] {
  if (!config.console.enabled) return [];
  return [
    {
      method: 'GET',
      path: CONSOLE_PATH,
      operationId: 'getConsolePage',
      responses: { 200: { raw: { contentType: 'text/html', schema: { type: 'string' } }, description: 'the console page; it holds no data and asks for a key' } },
      access: 'public',
      summary: 'the web console (HTML; the page asks for the master key or an API key and calls this API with it)',
      schema: {},
      handler({ ctx }) {
        const page = consolePage();
        if (!page) throw new GatewayError('NOT_FOUND', 'the console was not built (npm run build builds it)');
        pageHeaders(ctx);
        ctx.set('Cache-Control', 'no-cache');
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = page;
        return undefined;
      },
    },
    {
      method: 'GET',
      path: `${CONSOLE_ASSETS_PATH}/:file`,
      operationId: 'getConsoleAsset',
      responses: { 200: { raw: { contentType: 'application/octet-stream', schema: { type: 'string', format: 'binary' } }, description: 'a script or style sheet of the console, named by its content hash; cached for a year' } },
      access: 'public',
      summary: 'a file of the web console (its script and style sheet, named by content hash)',
      schema: { params: { type: 'object', required: ['file'], properties: { file: { type: 'string', minLength: 1, maxLength: 64 } } } },
      handler({ params, ctx }) {
        const file = (params as { file: string }).file;
        const asset = consoleAsset(file);
        if (!asset) throw new GatewayError('NOT_FOUND', `the console has no file ${file}`);
        pageHeaders(ctx);
        ctx.set('Cache-Control', `public, max-age=${YEAR_SECONDS}, immutable`);
        ctx.type = asset.contentType;
        ctx.body = asset.body;
        return undefined;
      },
    },
  ];
}
