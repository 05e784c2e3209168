// The connect-time guarded undici dispatcher of the URL guard (url-guard.ts); the daemon creates it through
// lazyGuardedDispatcher there, so that undici loads on first use.
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { Dispatcher } from 'undici';
import { BlockedTargetError, defaultResolver, isBlockedAddress, isInternalHostname, makeGuardedLookup, type GuardedDispatcherOptions, type UrlPolicy } from './url-guard.js';

/**
 * An undici Agent that resolves every target host through `resolver`, refuses the connection when any resolved
 * address (or a literal-IP host) is not public, and connects to exactly the addresses it checked. Host header and
 * TLS SNI keep the original host name. With `allowPrivateTargets` nothing is refused.
 */
export function createGuardedDispatcher(
  policy: UrlPolicy,
  opts: GuardedDispatcherOptions = {},
): Dispatcher {
  const resolver = opts.resolver ?? defaultResolver;
  const base = buildConnector({ timeout: opts.connectTimeoutMs ?? 10_000, lookup: makeGuardedLookup(policy, resolver) });

  const connect: buildConnector.connector = (options, callback) => {
    if (!policy.allowPrivateTargets) {
      const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
      if (options.protocol !== 'https:') {
        callback(new BlockedTargetError(`Refused to connect: ${options.protocol.replace(/:$/, '')} to ${host} is not allowed; https is required`), null);
        return;
      }
      if (isIP(host) !== 0) {
        // net.connect skips the lookup for literal IPs, so check them here.
        if (isBlockedAddress(host)) {
          callback(new BlockedTargetError(`Refused to connect: ${host} is a blocked address`), null);
          return;
        }
      } else if (isInternalHostname(host)) {
        callback(new BlockedTargetError(`Refused to connect: ${host} is an internal host name`), null);
        return;
      }
    }
    base(options, callback);
  };

  return new Agent({
    connect,
    connections: opts.connections ?? null,
    keepAliveTimeout: opts.keepAliveTimeout ?? 4_000,
  });
}
