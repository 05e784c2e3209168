// The module hooks of import-log.ts (they run on the loader's own thread).
import { appendFileSync } from 'node:fs';

let log: string | undefined;

export function initialize(data: { log?: string }): void {
  log = data.log;
}

type Next = (specifier: string, context: unknown) => Promise<unknown>;

export async function resolve(specifier: string, context: unknown, next: Next): Promise<unknown> {
  if (log && !/^(node:|\.|\/|file:|data:)/.test(specifier)) appendFileSync(log, `${specifier}\n`);
  return next(specifier, context);
}
