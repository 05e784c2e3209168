// Prototype pollution seen from inside: the pieces the daemon runs on untrusted input (every route's validators, the
// JSON parser in front of them, the config loader) run here on the fuzz's generated inputs, and Object.prototype
// must come out untouched. The HTTP fuzz (routes.test.ts) checks the same from outside, through behaviour.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { compileValidator } from '../../src/http/validation.js';
import { almostValid, junkBodyText, POLLUTION_MARK, toJsonText, valid } from './arbitraries.js';
import { fc, routeId, routeTable } from './harness.js';

const PROTOTYPES = [Object.prototype, Array.prototype, Function.prototype, String.prototype];
const before = PROTOTYPES.map((p) => Object.getOwnPropertyNames(p).sort().join());

function assertUnpolluted(input: string): void {
  PROTOTYPES.forEach((p, i) => assert.equal(Object.getOwnPropertyNames(p).sort().join(), before[i], `a prototype changed after ${input.slice(0, 300)}`));
  assert.equal(({} as Record<string, unknown>)[POLLUTION_MARK], undefined, `Object.prototype.${POLLUTION_MARK} is set after ${input.slice(0, 300)}`);
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** what a query string or path segment could carry: text (String() of a 5,000-deep array overflows the stack) */
const asText = (v: unknown): string => {
  try {
    return typeof v === 'string' ? v : JSON.stringify(v) ?? '';
  } catch {
    return '[deep]';
  }
};

test('no route validator pollutes a prototype, whatever body, query or params it is given', () => {
  const routes = routeTable();
  const cases = fc.oneof(
    ...routes.flatMap((route) =>
      (['params', 'query', 'body'] as const)
        .filter((source) => route.schema[source])
        .map((source) => {
          const schema = route.schema[source] as object;
          const validate = compileValidator(schema, source);
          const values = fc.oneof(valid(schema, {}), almostValid(valid(schema, {})), junkBodyText.map(parse));
          return values.map((v) => ({ route: routeId(route), source, text: toJsonText(v), validate }));
        }),
    ),
  );
  fc.assert(
    fc.property(cases.map((c) => Object.assign(c, { [fc.toStringMethod]: () => `${c.route} ${c.source}: ${c.text.slice(0, 500)}` })), ({ text, validate, source }) => {
      // bodies arrive through JSON.parse; query strings and params arrive as flat string records
      const value = parse(text);
      const input = source === 'body' ? value : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asText(v)])) : {};
      try {
        validate(input);
      } catch {
        // refusals are expected; only side effects matter here
      }
      assertUnpolluted(text);
    }),
    { seed: 16_017, numRuns: 2000 },
  );
});

test('the config loader does not pollute a prototype from gateway.yaml', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fuzz-config-'));
  const path = join(dir, 'gateway.yaml');
  const env = { GATEWAY_MASTER_KEY: 'svc_master_test_0123456789abcdef0123456789' };
  const payload = `{"${POLLUTION_MARK}": true, "allowPrivateTargets": true}`;
  const fixed = [
    `__proto__: ${payload}\n`,
    `webhooks:\n  __proto__: ${payload}\n`,
    `constructor:\n  prototype: ${payload}\n`,
    `auth:\n  constructor:\n    prototype: ${payload}\n`,
    `{"__proto__": ${payload}, "logLevel": "info"}\n`,
    `<<: {__proto__: ${payload}}\n`,
  ];
  const generated = fc.sample(
    fc.oneof(
      almostValid(fc.record({ webhooks: fc.record({ allowPrivateTargets: fc.boolean() }), logLevel: fc.constantFrom('info', 'debug') })).map(toJsonText),
      // the YAML parser's speed on megabytes is not the question here
      junkBodyText.filter((text) => text.length < 20_000),
    ),
    { seed: 16_018, numRuns: 300 },
  );
  try {
    for (const text of [...fixed, ...generated]) {
      writeFileSync(path, text);
      try {
        loadConfig({ configPath: path, env });
      } catch {
        // a refused file is fine
      }
      assertUnpolluted(text);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
