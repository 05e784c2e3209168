// Every relative link of the product docs names a file of the repository, and every #anchor a heading of its page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from '../helpers/daemon.js';

const PAGES = ['README.md', 'docs/API.md', 'docs/EVENTS.md', 'docs/ENGINES.md', 'docs/SCALING.md', 'docs/BENCHMARKS.md'];

/** The anchors GitHub gives a page's headings (lowercase, punctuation dropped, spaces as `-`, repeats numbered), and its `<a id>` anchors. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    for (const [, id] of inFence ? [] : line.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(id!);
    const heading = inFence ? null : /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const base = text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const repeat = seen.get(base) ?? 0;
    seen.set(base, repeat + 1);
    anchors.add(repeat ? `${base}-${repeat}` : base);
  }
  return anchors;
}

/** The relative links of a page that lead nowhere: a file not in the repository, or an anchor no heading has. */
export function brokenLinks(page: string, read: (path: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const [, target] of read(page)!.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue;
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const file = path ? join(dirname(page), path) : page;
    const text = read(file);
    if (text === undefined) broken.push(`${target}: no such file`);
    else if (anchor !== undefined && file.endsWith('.md') && !headingAnchors(text).has(anchor)) broken.push(`${target}: no such heading`);
  }
  return broken;
}

const readRepo = (path: string): string | undefined => {
  const full = join(ROOT, path);
  if (!existsSync(full)) return undefined;
  return path.endsWith('.md') ? readFileSync(full, 'utf8') : '';
};

for (const page of PAGES) {
  test(`the links of ${page} lead to files and headings that exist`, () => {
    assert.deepEqual(brokenLinks(page, readRepo), []);
  });
}

test('README.md has each top-level heading once', () => {
  const headings = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').filter((line) => line.startsWith('## '));
  assert.deepEqual(headings.filter((h, i) => headings.indexOf(h) !== i), []);
});

test('brokenLinks finds a missing file and a missing heading', () => {
  const pages: Record<string, string> = {
    'docs/A.md': '# A\n## The `x` route (scope `y`)\n[ok](#the-x-route-scope-y) [file](B.md#b) [gone](C.md) [no](#nope) [web](https://example.com/#x)',
    'docs/B.md': '# B\n',
  };
  assert.deepEqual(brokenLinks('docs/A.md', (p) => pages[p]), ['C.md: no such file', '#nope: no such heading']);
});
