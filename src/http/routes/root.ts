// GET /: a browser pointed at the daemon's address lands on the web console (302). Without the console the path has no
// route, and answers 404 ROUTE_NOT_FOUND as any unknown path does.
import { CONSOLE_PATH } from '../console/assets.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

export function rootRoutes({ config }: Services): RouteDef[] {
  if (!config.console.enabled) return [];
  return [
    {
      method: 'GET',
      path: '/',
      operationId: 'redirectToConsole',
      responses: { 302: { raw: { contentType: 'text/html', schema: { type: 'string' } }, description: `to the web console: \`Location: ${CONSOLE_PATH}\`` } },
      access: 'public',
      summary: `the daemon's address in a browser: a redirect (302) to the web console at ${CONSOLE_PATH}`,
      schema: {},
      handler({ ctx }) {
        ctx.status = 302;
        ctx.set('Location', CONSOLE_PATH);
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = `<a href="${CONSOLE_PATH}">${CONSOLE_PATH}</a>\n`;
        return undefined;
      },
    },
  ];
}
