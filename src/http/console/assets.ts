// The web console's files (built by bin/build-console.mjs into dist/console from console/): its page and hashed assets,
// read once on first use, and the Content-Security-Policy they are served with.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CONSOLE_PATH = '/console';
export const CONSOLE_ASSETS_PATH = '/console/assets';

/** This origin only, and nothing inline: the console is one script and one style sheet; the QR is drawn on a canvas. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // blob: the conversations page shows images it fetched with the key (object URLs the page made itself)
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// dist/src/http/console/assets.js → dist/console/
const BUILT = fileURLToPath(new URL('../../../console/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  js: 'application/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

interface Built {
  page: Buffer;
  assets: Map<string, { body: Buffer; contentType: string }>;
}

let built: Built | undefined;

function load(): Built | undefined {
  if (built) return built;
  if (!existsSync(`${BUILT}manifest.json`)) return undefined;
  const manifest = JSON.parse(readFileSync(`${BUILT}manifest.json`, 'utf8')) as { assets: string[] };
  const assets = new Map<string, { body: Buffer; contentType: string }>();
  for (const name of manifest.assets) {
    const contentType = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
    assets.set(name, { body: readFileSync(`${BUILT}assets/${name}`), contentType });
  }
  built = { page: readFileSync(`${BUILT}index.html`), assets };
  return built;
}

/** The console's index.html, or undefined when the console was not built. */
export const consolePage = (): Buffer | undefined => load()?.page;

/** One of the console's hashed files (only names the build listed in its manifest). */
export const consoleAsset = (name: string): { body: Buffer; contentType: string } | undefined => load()?.assets.get(name);
