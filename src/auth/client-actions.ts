// The client-token action table of SPEC §5: which routes a browser token may reach, and under which action.
export const CLIENT_ACTIONS = ['send_message', 'send_reaction', 'send_typing', 'send_seen', 'read_presence', 'subscribe_presence', 'read_contact'] as const;
export type ClientAction = (typeof CLIENT_ACTIONS)[number];

/** Actions that send something to a recipient: recipientMode applies to them. */
export const SENDING_ACTIONS: ReadonlySet<ClientAction> = new Set(['send_message', 'send_reaction', 'send_typing', 'send_seen']);
/** Actions counted against the daily send cap (SPEC §2: messages and reactions). */
export const CAPPED_ACTIONS: ReadonlySet<ClientAction> = new Set(['send_message', 'send_reaction']);

const TABLE: Array<{ method: string; path: string; action: ClientAction }> = [
  { method: 'POST', path: '/api/sessions/:session/messages/send', action: 'send_message' },
  { method: 'POST', path: '/api/messages/send', action: 'send_message' },
  { method: 'POST', path: '/api/sessions/:session/messages/react', action: 'send_reaction' },
  { method: 'POST', path: '/api/sessions/:session/messages/typing', action: 'send_typing' },
  { method: 'POST', path: '/api/sessions/:session/messages/seen', action: 'send_seen' },
  { method: 'GET', path: '/api/sessions/:session/presence', action: 'read_presence' },
  { method: 'GET', path: '/api/sessions/:session/presence/:chatId', action: 'read_presence' },
  { method: 'POST', path: '/api/sessions/:session/presence/:chatId/subscribe', action: 'subscribe_presence' },
  { method: 'GET', path: '/api/sessions/:session/contacts', action: 'read_contact' },
  { method: 'GET', path: '/api/sessions/:session/contacts/:contactId', action: 'read_contact' },
  { method: 'GET', path: '/api/sessions/:session/contacts/:contactId/picture', action: 'read_contact' },
  { method: 'POST', path: '/api/sessions/:session/contacts/check', action: 'read_contact' },
];

/** every route a client token may reach, with its action (tests loop over it) */
export const CLIENT_ROUTES: ReadonlyArray<Readonly<{ method: string; path: string; action: ClientAction }>> = TABLE;

const BY_ROUTE = new Map(TABLE.map((row) => [`${row.method} ${row.path}`, row.action]));
const MATCHERS = TABLE.map((row) => ({
  ...row,
  regex: new RegExp(`^${row.path.replace(/:session/, '(?<session>[^/]+)').replace(/:\w+/g, '[^/]+')}/?$`),
}));

/** The action of a route record (method + router path), or undefined when client tokens may not call it. */
export function actionOfRoute(method: string, path: string): ClientAction | undefined {
  return BY_ROUTE.get(`${method} ${path}`);
}

/** For CORS: whether a concrete request path is a client-token route, and the session it names (if any). */
export function matchClientPath(path: string): { session?: string; methods: string[] } | undefined {
  const hits = MATCHERS.filter((m) => m.regex.test(path));
  if (!hits.length) return undefined;
  const session = hits[0]!.regex.exec(path)?.groups?.session;
  const decoded = session === undefined ? undefined : safeDecode(session);
  return { ...(decoded ? { session: decoded } : {}), methods: [...new Set(hits.map((h) => h.method))] };
}

/** a malformed escape names no session (the request itself is refused with 400 by the HTTP layer) */
function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
