// SSRF guard for outbound URLs (webhook delivery, media downloads, session proxies): create-time URL checks, a
// connect-time guarded undici dispatcher, and a guarded DNS lookup for connections made by other agents.

import { promises as dns } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Dispatcher } from 'undici';
import { GatewayError } from '../errors.js';

export interface UrlPolicy {
  /** A local deployment: allows http, private/loopback addresses and internal host names. */
  allowPrivateTargets: boolean;
}

export type UrlRejectionCode = 'WEBHOOK_URL_REJECTED' | 'MEDIA_URL_REJECTED' | 'PROXY_URL_REJECTED';

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

/** Raised (through the dispatcher) when a delivery target is refused at connect time. */
export class BlockedTargetError extends Error {
  readonly code = 'ERR_BLOCKED_TARGET';

  constructor(message: string) {
    super(message);
    this.name = 'BlockedTargetError';
  }
}

/** Suffixes (and exact names) that only make sense inside a private network. */
const INTERNAL_SUFFIXES = ['localhost', 'local', 'localdomain', 'internal', 'lan', 'home.arpa', 'intranet', 'corp'];

/** The NAT64 well-known prefix 64:ff9b::/96 (RFC 6052); the local-use 64:ff9b:1::/48 is refused outright. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
/** IPv6 global unicast space 2000::/3; anything outside it (bar NAT64 above) is not a public target. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

function embeddedV4(parts: number[], hiIndex: number): ipaddr.IPv4 {
  const hi = parts[hiIndex] ?? 0;
  const lo = parts[hiIndex + 1] ?? 0;
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function v4BlockedReason(addr: ipaddr.IPv4): string | null {
  const range = addr.range();
  return range === 'unicast' ? null : range;
}

/**
 * Why an address is not a public target ("loopback", "private", "ipv4Mapped→loopback", …), or null when it is public.
 * Unparseable input is reported as "invalid" (fail closed).
 */
function blockedReason(ip: string): string | null {
  let text = ip.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (!ipaddr.isValid(text)) return 'invalid';
  // Only canonical dotted-quad IPv4 is accepted here; ipaddr.js would also take "0x7f.1"-style spellings.
  if (!text.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(text)) return 'invalid';
  const addr = ipaddr.parse(text);
  if (addr.kind() === 'ipv4') return v4BlockedReason(addr as ipaddr.IPv4);

  const v6 = addr as ipaddr.IPv6;
  const range = v6.range();
  switch (range) {
    case 'ipv4Mapped': {
      // ::ffff:a.b.c.d — the socket reaches the embedded IPv4 address.
      const inner = v4BlockedReason(v6.toIPv4Address());
      return inner === null ? null : `ipv4Mapped→${inner}`;
    }
    case 'rfc6145': {
      // ::ffff:0:a.b.c.d (IPv4-translated); never a legitimate public target.
      return 'rfc6145';
    }
    case 'rfc6052': {
      // NAT64: allowed only for the well-known /96 prefix embedding a public IPv4 address.
      if (!v6.match(NAT64_WELL_KNOWN)) return 'rfc6052';
      const inner = v4BlockedReason(embeddedV4(v6.parts, 6));
      return inner === null ? null : `nat64→${inner}`;
    }
    case '6to4': {
      // 2002:AABB:CCDD::/48 — the relay forwards to the embedded IPv4 address.
      const inner = v4BlockedReason(embeddedV4(v6.parts, 1));
      return inner === null ? null : `6to4→${inner}`;
    }
    case 'unicast': {
      // ::a.b.c.d (deprecated IPv4-compatible) and other unassigned space outside 2000::/3.
      return v6.match(GLOBAL_UNICAST) ? null : 'reserved';
    }
    default:
      // loopback, unspecified, linkLocal, uniqueLocal, multicast, teredo, reserved, benchmarking, …
      return range;
  }
}

/** True when the address (IPv4 or IPv6, with or without brackets) is not a public unicast target. */
export function isBlockedAddress(ip: string): boolean {
  return blockedReason(ip) !== null;
}

function normaliseHostname(hostname: string): string {
  return hostname.toLowerCase().replace(/\.+$/, '');
}

/** True for localhost, *.localhost, *.local, *.internal, *.lan, *.home.arpa, *.intranet, *.corp and single-label names. */
export function isInternalHostname(hostname: string): boolean {
  const name = normaliseHostname(hostname);
  if (name === '' || !name.includes('.')) return true;
  return INTERNAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

const LABELS: Record<UrlRejectionCode, string> = { WEBHOOK_URL_REJECTED: 'Webhook URL', MEDIA_URL_REJECTED: 'Media URL', PROXY_URL_REJECTED: 'Proxy URL' };
/** The gateway.yaml setting that lifts the https-only and public-host rules for each kind of URL. */
const PRIVATE_SETTING: Record<UrlRejectionCode, string> = {
  WEBHOOK_URL_REJECTED: 'webhooks.allowPrivateTargets',
  MEDIA_URL_REJECTED: 'media.allowPrivateUrls',
  PROXY_URL_REJECTED: 'webhooks.allowPrivateTargets',
};

function reject(code: UrlRejectionCode, reason: string, field = '/url'): never {
  throw new GatewayError(code, `${LABELS[code]} rejected: ${reason}.`, [{ path: field, message: reason }]);
}

/** Why a host (name or literal IP, brackets allowed) is not a public target, or null when it is. */
function hostRejection(hostname: string): string | null {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) {
    const why = blockedReason(host);
    return why === null ? null : `it points to a non-public address (${host}, ${why}); private, loopback, link-local and other internal targets are refused`;
  }
  const name = normaliseHostname(host);
  if (!name.includes('.')) return `the host "${name}" is a single-label name; a fully qualified public domain name is required`;
  if (isInternalHostname(name)) return `the host "${name}" is an internal name; only public hosts are allowed`;
  return null;
}

export const PROXY_PROTOCOLS = ['http:', 'https:', 'socks5:', 'socks5h:'];

/**
 * Check of a session's proxy URL (create time, and again where the engine connects): http, https or socks5 with a
 * host, credentials allowed; unless the policy allows private targets, the proxy host must be public, so a
 * `sessions:manage` key cannot aim the engine at the metadata service or the internal network.
 */
export function checkProxyUrl(raw: string, policy: UrlPolicy, field = '/proxy'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return reject('PROXY_URL_REJECTED', 'it is not a valid absolute URL', field);
  }
  if (!PROXY_PROTOCOLS.includes(url.protocol)) reject('PROXY_URL_REJECTED', `the scheme "${url.protocol.replace(/:$/, '')}" is not a proxy scheme; use http, https or socks5`, field);
  if (url.hostname === '') reject('PROXY_URL_REJECTED', 'it has no host', field);
  if (policy.allowPrivateTargets) return url;
  const why = hostRejection(url.hostname);
  if (why !== null) reject('PROXY_URL_REJECTED', why, field);
  return url;
}

/**
 * Create/update-time check of an outbound URL. Returns the parsed (WHATWG-normalised) URL; use its `href`
 * rather than the raw string. Throws GatewayError(code) with a sentence saying why the URL is refused.
 */
export function checkTargetUrl(raw: string, policy: UrlPolicy, code: UrlRejectionCode): URL {
  if (typeof raw !== 'string' || raw.trim() === '') reject(code, 'the URL is empty');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return reject(code, 'it is not a valid absolute URL');
  }

  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowPrivateTargets)) {
    if (url.protocol === 'http:') {
      reject(code, `it must use https (plain http is accepted only with ${PRIVATE_SETTING[code]})`);
    }
    reject(code, `the scheme "${url.protocol.replace(/:$/, '')}" is not allowed; use https`);
  }

  if (url.username !== '' || url.password !== '') {
    reject(code, 'it must not contain a username or password');
  }

  if (url.hostname === '') reject(code, 'it has no host');
  if (policy.allowPrivateTargets) return url;
  const why = hostRejection(url.hostname);
  if (why !== null) reject(code, why);
  return url;
}

/** Default resolver: the system resolver (getaddrinfo), every address, in the order the system gives them. */
export const defaultResolver: Resolver = async (hostname) => {
  const results = await dns.lookup(hostname, { all: true, verbatim: true });
  return results.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
};

function notFound(hostname: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  err.code = 'ENOTFOUND';
  err.syscall = 'getaddrinfo';
  return err;
}

/**
 * A `lookup` for net/tls connections made outside undici (proxy agents): resolves through `resolver`, refuses when any
 * address is not public (unless the policy allows private targets), and hands the socket exactly the checked addresses.
 */
export function makeGuardedLookup(policy: UrlPolicy, resolver: Resolver = defaultResolver): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolver(hostname).then(
      (all) => {
        if (!policy.allowPrivateTargets) {
          // Refuse when ANY address is blocked: a mixed answer is a rebinding attempt or a misconfiguration.
          const bad = all.find((a) => isBlockedAddress(a.address));
          if (bad !== undefined) {
            // the address stays out of the message: it reaches callers (a send's error, a webhook's lastError), and
            // naming it would let them map what internal names resolve to
            callback(new BlockedTargetError(`Refused to connect: ${hostname} resolved to a blocked address`), '');
            return;
          }
        }
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0) {
          callback(notFound(hostname), '');
          return;
        }
        if (options.all === true) {
          const list: LookupAddress[] = wanted.map((a) => ({ address: a.address, family: a.family }));
          callback(null, list);
        } else {
          const first = wanted[0]!;
          callback(null, first.address, first.family);
        }
      },
      (err: unknown) => {
        callback(err instanceof Error ? err : new Error(String(err)), '');
      },
    );
  };
}

/**
 * The guarded dispatcher (guarded-dispatcher.ts), created on first use: undici (about 5 MB and 60–150 ms to import)
 * is not loaded by a daemon that has sent no webhook and fetched no URL yet. It answers what the daemon calls:
 * request() (webhook deliveries), dispatch() (undici's request() helper: media downloads), close() and destroy().
 */
export function lazyGuardedDispatcher(policy: UrlPolicy, opts: GuardedDispatcherOptions = {}): Dispatcher & { preload(): void } {
  let agent: Dispatcher | undefined;
  let loading: Promise<Dispatcher> | undefined;
  const load = () => (loading ??= import('./guarded-dispatcher.js').then((m) => (agent = m.createGuardedDispatcher(policy, opts))));
  const lazy: Pick<Dispatcher, 'request' | 'dispatch' | 'close' | 'destroy'> = {
    request: ((options: Dispatcher.RequestOptions) => (agent ? agent.request(options) : load().then((a) => a.request(options)))) as Dispatcher['request'],
    dispatch(options, handler) {
      if (agent) return agent.dispatch(options, handler);
      load().then(
        (a) => a.dispatch(options, handler),
        (err: Error) => handler.onError?.(err),
      );
      return true;
    },
    close: (() => (loading ? loading.then((a) => a.close()) : Promise.resolve())) as Dispatcher['close'],
    destroy: (() => (loading ? loading.then((a) => a.destroy()) : Promise.resolve())) as Dispatcher['destroy'],
  };
  // loading undici takes a few hundred ms of the event loop: better now than in the middle of a burst of sends
  const preload = () => void load().catch(() => {});
  return Object.assign(lazy as Dispatcher, { preload });
}

export interface GuardedDispatcherOptions {
  resolver?: Resolver;
  connections?: number;
  keepAliveTimeout?: number;
  connectTimeoutMs?: number;
}
