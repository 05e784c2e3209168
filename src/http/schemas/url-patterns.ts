// Patterns of the URLs the daemon accepts (webhook targets, session proxies, client-rule origins): what WHATWG URL
// parsing accepts and what the checks after it read (scheme, host, port), as ECMA-262 patterns a document can carry.
// They are a little stricter than the parser (a host's last label starts with a letter unless it is an IP address),
// so a URL a pattern accepts always parses.

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
export const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;

const H = '[0-9A-Fa-f]{1,4}';
/** groups `H:H:…` of exactly n (n ≥ 1) */
const groups = (n: number) => (n === 1 ? H : `${H}(?::${H}){${n - 1}}`);
/** an IPv6 address: full, or with one `::` standing for at least one group, optionally ending in an IPv4 address */
function ipv6(): string {
  const forms = [`(?:${H}:){7}${H}`, `(?:${H}:){6}${IPV4}`];
  for (let left = 0; left <= 7; left++) {
    const head = left ? groups(left) : '';
    const rightMax = 6 - left;
    forms.push(`${head}::${rightMax >= 1 ? `(?:${H}(?::${H}){0,${rightMax - 1}})?` : ''}`);
    // with an IPv4 address (two groups' worth) at the end
    const v4Max = 4 - left;
    if (v4Max >= 0) forms.push(`${head}::${v4Max >= 1 ? `(?:${H}:){0,${v4Max}}` : ''}${IPV4}`);
  }
  return `(?:${forms.join('|')})`;
}
export const IPV6 = ipv6();

const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const LAST_LABEL = '[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
export const DOMAIN = `(?:${LABEL}\\.)*${LAST_LABEL}\\.?`;
export const HOST = `(?:${IPV4}|\\[${IPV6}\\]|${DOMAIN})`;
export const PORT = '(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})';
const PATH = '(?:[/?#][^\\s\\\\]*)?';

/** `[Hh][Tt]…`: a scheme is case-insensitive, a pattern has no flag for it */
export const anyCase = (text: string) => text.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);

/** an absolute URL of one of the schemes, with a host, an optional port and path, and credentials only if allowed */
export function urlPattern(schemes: string[], options: { credentials: boolean }): string {
  const userinfo = options.credentials ? '(?:[^/?#@\\s\\\\]*@)?' : '';
  return `^(?:${schemes.map(anyCase).join('|')})://${userinfo}${HOST}(?::${PORT})?${PATH}$`;
}

/** A comma list of origins as browsers send them: lowercase scheme and host (a name or IPv4), no default port, no path. */
export function originListPattern(): string {
  const lowerDomain = '(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\\.)*[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?';
  // (an IPv6 origin is left out: the browser writes it compressed, in one of the many ways a pattern would have to list)
  const host = `(?:${IPV4}|${lowerDomain})`;
  const origin = `(?:http://${host}(?::(?!80(?![0-9]))${PORT})?|https://${host}(?::(?!443(?![0-9]))${PORT})?)/?`;
  return `^[\\s,]*(?:${origin}\\s*(?:,[\\s,]*|$))*$`;
}
