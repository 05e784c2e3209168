// The API reference page (GET /docs): our own HTML and initializer around swagger-ui-dist's files, all served by the
// daemon so the page works offline; its Content-Security-Policy allows nothing but this origin.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Where the page loads the document it renders. */
export const DOCUMENT_PATH = '/api/openapi.json';
export const ASSETS_PATH = '/docs/assets';

/**
 * Only this origin: scripts are files (no inline code, no eval), swagger-ui sets inline styles and draws its icons as
 * data: images, and the page may not be framed.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const require = createRequire(import.meta.url);
const distDir = dirname(require.resolve('swagger-ui-dist/package.json'));
const distVersion = (require('swagger-ui-dist/package.json') as { version: string }).version;

interface Asset {
  contentType: string;
  /** a file of swagger-ui-dist, or our own content */
  source: string | { text: string };
}

const INITIALIZER = `// Starts swagger-ui on the daemon's live OpenAPI document (served by the daemon; no external requests).
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(DOCUMENT_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    // the default sends the document to validator.swagger.io
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
    displayOperationId: true,
    docExpansion: 'list',
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'BaseLayout',
  });
});
`;

const ASSETS: Record<string, Asset> = {
  'swagger-ui.css': { contentType: 'text/css; charset=utf-8', source: 'swagger-ui.css' },
  'swagger-ui-bundle.js': { contentType: 'application/javascript; charset=utf-8', source: 'swagger-ui-bundle.js' },
  'swagger-ui-standalone-preset.js': { contentType: 'application/javascript; charset=utf-8', source: 'swagger-ui-standalone-preset.js' },
  'favicon-32x32.png': { contentType: 'image/png', source: 'favicon-32x32.png' },
  'init.js': { contentType: 'application/javascript; charset=utf-8', source: { text: INITIALIZER } },
};

/** Asset URLs carry swagger-ui's version, so they can be cached for a year and still change with an upgrade. */
const assetUrl = (name: string): string => `${ASSETS_PATH}/${name}?v=${encodeURIComponent(distVersion)}`;

export function docsHtml(): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Session Gateway API reference</title>
<link rel="stylesheet" href="${assetUrl('swagger-ui.css')}">
<link rel="icon" type="image/png" href="${assetUrl('favicon-32x32.png')}">
</head>
<body>
<noscript>The API reference needs JavaScript. The document itself is at <a href="${DOCUMENT_PATH}">${DOCUMENT_PATH}</a>.</noscript>
<div id="swagger-ui"></div>
<script src="${assetUrl('swagger-ui-bundle.js')}"></script>
<script src="${assetUrl('swagger-ui-standalone-preset.js')}"></script>
<script src="${assetUrl('init.js')}"></script>
</body>
</html>
`;
}

export const assetNames = (): string[] => Object.keys(ASSETS);

const loaded = new Map<string, Buffer>();

/** The asset's bytes and type, or undefined when the page has no such file. Files are read once, on first use. */
export function docsAsset(name: string): { body: Buffer; contentType: string } | undefined {
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!asset) return undefined;
  let body = loaded.get(name);
  if (!body) {
    body = typeof asset.source === 'string' ? readFileSync(join(distDir, asset.source)) : Buffer.from(asset.source.text, 'utf8');
    loaded.set(name, body);
  }
  return { body, contentType: asset.contentType };
}
