#!/usr/bin/env node
// Bundles the web console (console/, browser code) into dist/console: hashed script and style sheet under assets/,
// an index.html that loads them (no inline code), and manifest.json for the daemon. Prints the gzipped size and fails
// past the budget. esbuild-wasm: no native binary is downloaded.
import { build } from 'esbuild-wasm';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'console');
const BUDGET_GZIP_BYTES = 150 * 1024;

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { app: 'console/main.js', style: 'console/style.css' },
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2020'],
  outdir: join(OUT, 'assets'),
  entryNames: '[name]-[hash]',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = outputs.find((name) => name.endsWith('.js'));
const style = outputs.find((name) => name.endsWith('.css'));
if (!script || !style) throw new Error(`console build produced ${outputs.join(', ')}`);

const html = readFileSync(join(ROOT, 'console', 'index.html'), 'utf8')
  .replace('%STYLE%', `/console/assets/${style}`)
  .replace('%SCRIPT%', `/console/assets/${script}`);
writeFileSync(join(OUT, 'index.html'), html);
writeFileSync(join(OUT, 'manifest.json'), JSON.stringify({ assets: [script, style] }, null, 2) + '\n');

const files = [join(OUT, 'index.html'), ...[script, style].map((name) => join(OUT, 'assets', name))];
const sizes = files.map((file) => ({ file: basename(file), raw: readFileSync(file).length, gzip: gzipSync(readFileSync(file), { level: 9 }).length }));
const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
for (const s of sizes) console.log(`console: ${s.file} ${(s.raw / 1024).toFixed(1)} KB, ${(s.gzip / 1024).toFixed(1)} KB gzipped`);
console.log(`console: ${(total / 1024).toFixed(1)} KB gzipped in all (budget ${BUDGET_GZIP_BYTES / 1024} KB)`);
if (total > BUDGET_GZIP_BYTES) {
  console.error('console: over the size budget');
  process.exit(1);
}
