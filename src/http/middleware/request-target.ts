// Only origin-form request targets (`/api/...`) are this API's: an absolute-form (`http://host/api/...`), asterisk-form
// (`*`) or authority-form (`host:port`) target is refused before authentication or any other work. Koa would otherwise
// read the path out of an absolute URL and answer it as if the client had asked for that path on this host.
import type { ParameterizedContext } from 'koa';
import { GatewayError } from '../../errors.js';
import type { AppState } from '../types.js';

export function isOriginForm(target: string | undefined): boolean {
  return target !== undefined && target.startsWith('/');
}

export function refuseNonOriginForm(ctx: ParameterizedContext<AppState>): void {
  if (isOriginForm(ctx.req.url)) return;
  throw nonOriginFormError();
}

export function nonOriginFormError(): GatewayError {
  return new GatewayError('MALFORMED_REQUEST', 'the request target must be a path (origin-form, such as /api/health)');
}
