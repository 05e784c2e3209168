// Only origin-form request targets (`/api/...`) are this API's: an absolute-form (`http://host/api/...`), asterisk-form
// (`*`) or authority-form (`host:port`) target is refused before authentication or any other work. Koa would otherwise
// read the path out of an absolute URL and answer it as if the client had asked for that path on this host.
import type { ParameterizedContext } from 'koa';
import { GatewayError } from '../../errors.js';
import type { AppState } from '../types.js';

export function refuseNonOriginForm(ctx: ParameterizedContext<AppState>): void {
  if (ctx.req.url?.startsWith('/')) return;
  throw new GatewayError('MALFORMED_REQUEST', 'the request target must be a path (origin-form, such as /api/health)');
}
