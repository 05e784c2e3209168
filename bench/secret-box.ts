// `node dist/bench/secret-box.js`: the cost of sealing secrets at rest. Seal/open per value at the sizes the Baileys
// engine writes (a pre-key, creds, a Signal session record), and a keys.set batch through the auth-state store with
// and without sealing, on a real database. Standalone (not in `npm run bench`): a quick figure, not a tracked row.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { secretBoxFor, type SecretBox } from '../src/auth/secret-box.js';
import { createAuthStateRepo } from '../src/store/auth-state.js';
import { openDatabase } from '../src/store/db.js';

const box = secretBoxFor({ masterKey: 'svc_master_bench_0123456789abcdef0123456789' });
const plain: SecretBox = { keyId: '00000000', seal: (v) => v, open: (v) => v };

/** µs per call, the best of 5 rounds (the machine is shared: the minimum is the cost, the rest is noise) */
function perOp(label: string, count: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(count, 2000); i++) fn(i);
  let us = Infinity;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < count; i++) fn(i);
    us = Math.min(us, Number(process.hrtime.bigint() - started) / 1000 / count);
  }
  process.stdout.write(`${label.padEnd(48)} ${us.toFixed(2).padStart(8)} µs\n`);
  return us;
}

/** perOp for the store's calls, which answer with promises (SQLite's settle at once: the await is part of the cost) */
async function perOpAsync(label: string, count: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(count, 2000); i++) await fn(i);
  let us = Infinity;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < count; i++) await fn(i);
    us = Math.min(us, Number(process.hrtime.bigint() - started) / 1000 / count);
  }
  process.stdout.write(`${label.padEnd(48)} ${us.toFixed(2).padStart(8)} µs\n`);
  return us;
}

const derive = perOp('derive the data key (HKDF, once per start)', 2000, () => secretBoxFor({ masterKey: 'svc_master_bench_0123456789abcdef0123456789' }));
void derive;
for (const [name, size] of [['pre-key (~150 B)', 150], ['creds (~2.5 KB)', 2500], ['session record (~6 KB)', 6000]] as const) {
  const value = JSON.stringify({ data: randomBytes(Math.floor(size * 0.7)).toString('base64') }).slice(0, size);
  const sealed = box.seal(value, 'auth_state.value');
  perOp(`seal ${name}`, 20_000, () => box.seal(value, 'auth_state.value'));
  perOp(`open ${name}`, 20_000, () => box.open(sealed, 'auth_state.value'));
}

// keys.set as Baileys calls it after a message: a batch of Signal values, one durable transaction
const dir = mkdtempSync(join(tmpdir(), 'bench-secret-box-'));
try {
  const db = openDatabase(join(dir, 'gateway.db'));
  const now = new Date().toISOString();
  await db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run('s', 'baileys', now, now);
  const batch = (i: number) => {
    const entries: Record<string, string> = {};
    for (let k = 0; k < 4; k++) entries[`baileys:session:${(i * 4 + k) % 64}`] = JSON.stringify({ record: randomBytes(1500).toString('base64') });
    return entries;
  };
  const batches = Array.from({ length: 300 }, (_, i) => batch(i));
  const plainStore = createAuthStateRepo(db, plain).forSession('s');
  const store = createAuthStateRepo(db, box).forSession('s');
  const without = await perOpAsync('keys.set, 4 × ~2 KB, plaintext (baseline)', 100, (i) => plainStore.set(batches[i % 300]!));
  const withBox = await perOpAsync('keys.set, 4 × ~2 KB, sealed', 100, (i) => store.set(batches[i % 300]!));
  const keys = Array.from({ length: 4 }, (_, k) => `baileys:session:${k}`);
  await perOpAsync('keys.get, 4 × ~2 KB, sealed', 20_000, () => store.getMany(keys));
  process.stdout.write(`sealed/plaintext keys.set: ${(withBox / without).toFixed(2)}×\n`);
  await db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
