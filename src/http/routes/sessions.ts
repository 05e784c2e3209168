// Session routes: create, list, get, start, stop, restart, logout, delete, QR and pairing code.
import { assertAccess, type Principal } from '../../auth/scopes.js';
import { GatewayError, ValidationError } from '../../errors.js';
import { loosenedSettings } from '../../messages/governor.js';
import type { GovernorConfig } from '../../config/types.js';
import { phoneDigits } from '../../engine/jid.js';
import { sessionView } from '../../sessions/view.js';
import type { DecryptionCounts } from '../../sessions/decryption-counters.js';
import type { SessionRow } from '../../store/sessions.js';
import { emptyBody, paging, sessionParams } from '../schemas/common.js';
import { createSessionBody, pairingCodeBody, qrQuery, updateSessionBody, type CreateSessionBody, type UpdateSessionBody } from '../schemas/sessions.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

export function sessionRoutes({ sessions, messaging, clientRules, config: gateway }: Services): RouteDef[] {
  const view = (row: SessionRow, decryption?: DecryptionCounts) => sessionView(row, sessions.healthOf(row.name), decryption);
  const mayLoosen = (principal: Principal | undefined, before: Record<string, unknown>, after: Record<string, unknown>) => mayLoosenGovernor(principal, before, after, gateway.governor);
  return [
    {
      method: 'POST',
      path: '/api/sessions',
      operationId: 'createSession',
      responses: { 201: { data: ref('Session') } },
      example: {
        body: { name: 'shop', engine: 'sandbox', start: true },
        data: {
          name: 'shop',
          engine: 'sandbox',
          status: 'CONNECTING',
          statusReason: 'SCAN_QR',
          config: {},
          lastError: null,
          health: null,
          lastFrameAt: null,
          createdAt: '2026-01-01T00:00:00.000Z',
          updatedAt: '2026-01-01T00:00:00.000Z',
        },
      },
      access: 'sessions:manage',
      sessionFrom: ({ body }) => (body as CreateSessionBody).name,
      startsSession: true,
      audit: {
        action: 'session.create',
        target: ({ body }) => (body as CreateSessionBody | undefined)?.name,
        details: ({ body, data }) => ({ engine: data.engine, start: (body as CreateSessionBody).start ?? false }),
      },
      summary: 'create a session (optionally starting it)',
      schema: { body: createSessionBody },
      async handler({ body, ctx }) {
        const input = body as CreateSessionBody;
        mayReplyToCalls(ctx.state.principal, input.config, input.name);
        mayLoosen(ctx.state.principal, {}, input.config ?? {});
        if (input.proxy !== undefined) checkProxy(input.proxy);
        const { engine: configEngine, ...config } = input.config ?? {};
        const row = await sessions.create({
          name: input.name,
          engine: input.engine ?? (configEngine as CreateSessionBody['engine']),
          proxy: input.proxy,
          config,
          start: input.start ?? false,
        });
        ctx.status = 201;
        return view(row);
      },
    },
    {
      method: 'GET',
      path: '/api/sessions',
      operationId: 'listSessions',
      responses: { 200: { data: listOf('Session') } },
      access: 'sessions:read',
      summary: 'list sessions',
      schema: { query: paging },
      async handler({ query, ctx }) {
        const principal = ctx.state.principal;
        const allowed = principal?.kind === 'key' ? principal.sessions : null;
        if (allowed) {
          const rows = (await Promise.all(allowed.map((name) => sessions.find(name)))).filter((row) => row !== undefined);
          const page = rows.slice(query.offset ?? 0, (query.offset ?? 0) + (query.limit ?? 1000));
          return paged(ctx, page.map((row) => view(row)), rows.length);
        }
        const { rows, total } = await sessions.list(query.limit ?? 1000, query.offset ?? 0);
        return paged(ctx, rows.map((row) => view(row)), total);
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session',
      operationId: 'getSession',
      responses: { 200: { data: ref('Session') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'get one session, with its decryption health counters when this daemon runs (or ran) it',
      schema: { params: sessionParams },
      handler: async ({ params }) => view(await sessions.get(params.session), sessions.decryptionOf(params.session)),
    },
    {
      method: 'PATCH',
      path: '/api/sessions/:session',
      operationId: 'updateSession',
      responses: { 200: { data: ref('Session') } },
      example: {
        body: { config: { calls: { reject: true, replyText: 'Sorry, calls are not answered here. Please write instead.' } } },
      },
      access: 'sessions:manage',
      audit: {
        action: 'session.update',
        // a governor change (an exemption above all) is recorded with its values
        details: ({ body }) => {
          const config = (body as UpdateSessionBody | undefined)?.config ?? {};
          return { fields: Object.keys(config), ...(config.governor !== undefined ? { governor: config.governor } : {}) };
        },
      },
      sessionFrom: 'params',
      summary: "change a session's settings: each config key given replaces the stored one, null removes it, the rest stay",
      description:
        'The call policy (`config.calls`) applies from the next incoming call; `governor` and `safeMode` from the next send; `markOnlineOnConnect` and `ignoreStatus` from the next start of the session. The engine cannot change. A `governor` looser than the session\'s current one (its override, else the gateway\'s settings), or `exempt`, needs the master key (403 FORBIDDEN_SCOPE).',
      schema: { params: sessionParams, body: updateSessionBody },
      async handler({ params, body, ctx }) {
        mayReplyToCalls(ctx.state.principal, (body as UpdateSessionBody).config, params.session);
        const { config } = await sessions.get(params.session);
        mayLoosen(ctx.state.principal, config, patched(config, (body as UpdateSessionBody).config));
        return view(await sessions.updateConfig(params.session, (body as UpdateSessionBody).config));
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/start',
      operationId: 'startSession',
      responses: { 200: { data: ref('Done') } },
      access: 'sessions:manage',
      audit: 'session.start',
      sessionFrom: 'params',
      startsSession: true,
      summary: 'start a session',
      schema: { params: sessionParams, body: emptyBody },
      async handler({ params }) {
        const started = await sessions.start(params.session);
        return done(started ? `session ${params.session} started` : `session ${params.session} was already running`);
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/stop',
      operationId: 'stopSession',
      responses: { 200: { data: ref('Done') } },
      access: 'sessions:manage',
      audit: 'session.stop',
      sessionFrom: 'params',
      summary: 'stop a session, keeping its credentials',
      schema: { params: sessionParams, body: emptyBody },
      async handler({ params }) {
        const stopped = await sessions.stop(params.session);
        return done(stopped ? `session ${params.session} stopped` : `session ${params.session} was not running`);
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/restart',
      operationId: 'restartSession',
      responses: { 200: { data: ref('Done') } },
      access: 'sessions:manage',
      audit: 'session.restart',
      sessionFrom: 'params',
      summary: 'stop then start a session',
      schema: { params: sessionParams, body: emptyBody },
      async handler({ params }) {
        await sessions.restart(params.session);
        return done(`session ${params.session} restarted`);
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/logout',
      operationId: 'logoutSession',
      responses: { 200: { data: ref('Done') } },
      access: 'sessions:manage',
      audit: 'session.logout',
      sessionFrom: 'params',
      summary: 'unlink the device and clear its credentials; the session is kept',
      schema: { params: sessionParams, body: emptyBody },
      async handler({ params }) {
        await sessions.logout(params.session);
        return done(`session ${params.session} logged out`);
      },
    },
    {
      method: 'DELETE',
      path: '/api/sessions/:session',
      operationId: 'deleteSession',
      responses: { 200: { data: ref('Done') } },
      access: 'sessions:manage',
      audit: 'session.delete',
      sessionFrom: 'params',
      summary: 'delete a session and all its data (the account is not logged out)',
      schema: { params: sessionParams, body: emptyBody },
      async handler({ params }) {
        await sessions.delete(params.session);
        messaging.forget(params.session);
        clientRules.forget(params.session);
        return done(`session ${params.session} deleted`);
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/pairing/qr',
      operationId: 'getPairingQr',
      responses: { 200: { data: ref('PairingQr') } },
      access: 'sessions:manage',
      sessionFrom: 'params',
      summary: 'the current pairing QR code',
      schema: { params: sessionParams, query: qrQuery },
      async handler({ params, query }) {
        const { qr, expiresAt } = await sessions.currentQr(params.session);
        if (query.format !== 'image') return { qr, expiresAt };
        return { qr, expiresAt, image: await (await qrcode()).toDataURL(qr, { margin: 1, width: 320 }) };
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/pairing/code',
      operationId: 'requestPairingCode',
      responses: { 200: { data: ref('PairingCode') } },
      access: 'sessions:manage',
      audit: 'session.pairing_code',
      sessionFrom: 'params',
      summary: 'request an 8-character pairing code for a phone number (starts the session when needed)',
      schema: { params: sessionParams, body: pairingCodeBody },
      async handler({ params, body }) {
        const digits = phoneDigits(body.phoneNumber);
        if (!digits) throw ValidationError.field('/phoneNumber', 'is not a valid E.164 number');
        const code = await sessions.requestPairingCode(params.session, digits);
        return { code, phoneNumber: `+${digits}` };
      },
    },
  ];
}

/** A proxy URL the engines can use: http(s) or socks5 with a host (the schema only checks the scheme). */
function checkProxy(proxy: string): void {
  let url: URL | undefined;
  try {
    url = new URL(proxy);
  } catch {
    url = undefined;
  }
  if (!url?.hostname) throw ValidationError.field('/proxy', 'is not a proxy URL like http://user:pass@host:8080 or socks5://host:1080');
}

/** qrcode loads when a QR image is first asked for, not at start. */
const qrcode = async () => (await import('qrcode')).default;

/** A call policy's reply is a message the session sends to every caller: setting one takes the messages:send scope too. */
/**
 * The send governor protects the account from a ban: a key with sessions:manage may tighten a session's governor, but
 * only the master key (the operator) may loosen it (past what the session has now: its override, else the gateway's
 * settings) or exempt the session.
 */
function mayLoosenGovernor(principal: Principal | undefined, before: Record<string, unknown>, after: Record<string, unknown>, defaults: GovernorConfig): void {
  if (!principal || principal.kind === 'master') return;
  const looser = loosenedSettings(defaults, before, after);
  if (looser.length) {
    throw new GatewayError('FORBIDDEN_SCOPE', `only the master key may loosen the send governor or exempt a session (${looser.join(', ')})`, looser.map((key) => ({ path: `/config/governor/${key}`, message: 'looser than the session\'s current setting: master key only' })));
  }
}

/** A session's config after a PATCH: each key given replaces the stored one, null removes it (as the manager stores it). */
function patched(config: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const next = { ...config };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

function mayReplyToCalls(principal: Principal | undefined, config: { calls?: unknown } | null | undefined, session: string): void {
  const calls = config?.calls as { replyText?: unknown } | null | undefined;
  if (principal && typeof calls?.replyText === 'string') assertAccess(principal, 'messages:send', session);
}
