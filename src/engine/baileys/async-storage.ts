// Baileys gives every socket its own AsyncLocalStorage (addTransactionCapability) and never disables it. On Node 20
// each enabled instance adds work to every promise in the process: with 200 sockets an `await` cost 47 µs instead of
// 0.1 µs (`node dist/bench/async-storage.js`), and the daemon stalled past about 170 sessions. Sockets built inside
// `withSharedAsyncStorage` get a facade instead: each facade keeps its own store inside one shared instance, so a
// session's transaction is still invisible to every other session.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire, syncBuiltinESMExports } from 'node:module';

type Stores = ReadonlyMap<object, unknown>;

const shared = new AsyncLocalStorage<Stores>();

/** The part of AsyncLocalStorage that Baileys uses (run, getStore), plus exit, over the one shared instance. */
export class SharedAsyncStorage<T> {
  getStore(): T | undefined {
    return shared.getStore()?.get(this) as T | undefined;
  }

  run<R, A extends unknown[]>(store: T, callback: (...args: A) => R, ...args: A): R {
    const stores = new Map(shared.getStore());
    stores.set(this, store);
    return shared.run(stores, callback, ...args);
  }

  exit<R, A extends unknown[]>(callback: (...args: A) => R, ...args: A): R {
    const current = shared.getStore();
    if (!current?.has(this)) return callback(...args);
    const stores = new Map(current);
    stores.delete(this);
    return shared.run(stores, callback, ...args);
  }

  disable(): void {}
}

const asyncHooks = createRequire(import.meta.url)('node:async_hooks') as { AsyncLocalStorage: unknown };

/**
 * Runs `build` (which must construct synchronously, as makeWASocket does) with `AsyncLocalStorage` standing for
 * SharedAsyncStorage, and puts the real class back before returning.
 */
export function withSharedAsyncStorage<T>(build: () => T): T {
  const original = asyncHooks.AsyncLocalStorage;
  asyncHooks.AsyncLocalStorage = SharedAsyncStorage;
  syncBuiltinESMExports();
  try {
    return build();
  } finally {
    asyncHooks.AsyncLocalStorage = original;
    syncBuiltinESMExports();
  }
}
