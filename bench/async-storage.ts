// `node dist/bench/async-storage.js`: what Baileys' one AsyncLocalStorage per socket costs every promise of the daemon
// on this Node, against the facades over one shared instance that the engine gives sockets instead
// (src/engine/baileys/async-storage.ts). µs per `await`, each case in a fresh process (an enabled AsyncLocalStorage
// cannot be removed), N instances each entered once, as a socket's first key-store transaction does. Standalone (not in
// `npm run bench`): a quick figure, not a tracked row.
import { spawnSync } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { SharedAsyncStorage } from '../src/engine/baileys/async-storage.js';

const AWAITS = 500_000;

async function child(kind: string, count: number): Promise<void> {
  const made: Array<{ run(store: object, fn: () => void): void }> = Array.from({ length: count }, () => (kind === 'real' ? new AsyncLocalStorage<object>() : new SharedAsyncStorage<object>()));
  for (const storage of made) storage.run({}, () => undefined);
  const loop = async (n: number) => {
    for (let i = 0; i < n; i++) await Promise.resolve(i);
  };
  await loop(50_000);
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    await loop(AWAITS);
    best = Math.min(best, ((performance.now() - started) * 1000) / AWAITS);
  }
  process.stdout.write(String(best));
}

if (process.argv[2] === '--child') {
  await child(process.argv[3]!, Number(process.argv[4]));
} else {
  const measure = (kind: string, count: number) =>
    Number(spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', kind, String(count)], { encoding: 'utf8' }).stdout);
  const bare = measure('real', 0);
  process.stdout.write(`${process.version}; µs per await, best of 3 rounds of ${AWAITS.toLocaleString('en')}; none: ${bare.toFixed(3)}\n`);
  process.stdout.write('sessions  one AsyncLocalStorage each  shared facades\n');
  for (const count of [1, 20, 50, 200, 1000]) {
    const real = measure('real', count);
    const shared = measure('shared', count);
    process.stdout.write(`${String(count).padStart(8)}  ${real.toFixed(3).padStart(24)}  ${shared.toFixed(3).padStart(14)}\n`);
  }
}
