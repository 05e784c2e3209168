// A session's proxy for every path Baileys takes to the network: the WebSocket and uploads (agents), fetch (a dispatcher).
import { EventEmitter } from 'node:events';
import type { Agent as HttpAgent } from 'node:http';
import type { Socket } from 'node:net';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { Agent as UndiciAgent, ProxyAgent, type Dispatcher } from 'undici';
import { GatewayError } from '../../errors.js';
import { checkProxyUrl, makeGuardedLookup, type Resolver, type UrlPolicy } from '../../net/url-guard.js';

export interface ProxyRoute {
  /** the WebSocket (`agent`) and media uploads over https.request (`fetchAgent`) */
  agent: HttpAgent;
  /** global fetch: downloads, history and app-state blobs, link previews */
  dispatcher: Dispatcher;
  close(): Promise<void>;
}

/**
 * HTTP(S) proxies: https-proxy-agent for the agents, undici's ProxyAgent for fetch. SOCKS5: socks-proxy-agent for
 * the agents, and an undici Agent whose connector opens each connection through the same SOCKS agent, so fetch
 * never bypasses the proxy. Neither pins its own CA list, so NODE_EXTRA_CA_CERTS and the system store still apply.
 */
/**
 * The proxy host goes through the URL policy here too (a row stored before the check existed, a policy since
 * tightened): a literal address now, a name at every connection through the guarded lookup, which connects to exactly
 * the addresses it checked (no DNS rebinding).
 */
export function proxyRoute(proxyUrl: string, policy: UrlPolicy = { allowPrivateTargets: false }, resolver?: Resolver): ProxyRoute {
  let url: URL;
  try {
    url = new URL(proxyUrl);
  } catch {
    throw new GatewayError('VALIDATION_FAILED', `proxy ${proxyUrl} is not a URL`, [{ path: '/proxy', message: 'is not a URL' }]);
  }
  checkProxyUrl(proxyUrl, policy);
  const lookup = makeGuardedLookup(policy, resolver);
  switch (url.protocol) {
    case 'http:':
    case 'https:': {
      const agent = new HttpsProxyAgent(url, { lookup }) as unknown as HttpAgent;
      const dispatcher = new ProxyAgent({ uri: url.href, proxyTls: { lookup } as never });
      return { agent, dispatcher, close: () => dispatcher.close().finally(() => agent.destroy()) };
    }
    case 'socks5:':
    case 'socks5h:': {
      const socks = new SocksProxyAgent(url, { socketOptions: { lookup } as never });
      const dispatcher = new UndiciAgent({ connect: socksConnector(socks) as never });
      return { agent: socks as unknown as HttpAgent, dispatcher, close: () => dispatcher.close().finally(() => socks.destroy()) };
    }
    default:
      throw new GatewayError('VALIDATION_FAILED', `proxy protocol ${url.protocol} is not supported (use http, https or socks5)`, [
        { path: '/proxy', message: 'unsupported protocol' },
      ]);
  }
}

type ConnectOptions = { hostname: string; host?: string; protocol: string; port: string; servername?: string };
type ConnectCallback = (err: Error | null, socket: Socket | null) => void;

/** An undici connector that tunnels through a SOCKS agent (and does TLS on top for https origins). */
function socksConnector(socks: SocksProxyAgent) {
  return function connectThroughSocks(options: ConnectOptions, callback: ConnectCallback): void {
    const secure = options.protocol === 'https:';
    const port = Number(options.port) || (secure ? 443 : 80);
    // agent-base's connect() emits 'proxy' on, and destroys, the request on failure; a stand-in is enough
    const request = Object.assign(new EventEmitter(), { destroy: () => undefined });
    socks
      .connect(request as never, { host: options.hostname, port, secureEndpoint: secure, ...(options.servername ? { servername: options.servername } : {}) } as never)
      .then((socket) => callback(null, socket as Socket), (err: Error) => callback(err, null));
  };
}
