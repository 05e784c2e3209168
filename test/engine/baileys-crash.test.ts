// kill -9 of the daemon in the middle of a burst, against the emulator, which (like WhatsApp) keeps every stanza until
// the device confirms it and delivers the unconfirmed ones again at its next login. The daemon is killed the moment the
// emulator reads the k-th confirmation (k random) of the burst: the worst moment for a confirmation that left before
// its commit. Afterwards nothing the emulator counts as confirmed may be missing: inbound, from the store (GET messages)
// and from the webhooks; outbound, a send whose delivery receipt was confirmed must be `delivered` (or later).
// Duplicates are counted and printed, not failed on. RUNS (default 2) and BURST (default 200) set the size; the long
// form is `RUNS=20 node --test --test-timeout=3600000 dist/test/engine/baileys-crash.test.js`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { after, before, describe, it } from 'node:test';
import type { BinaryNode } from '@whiskeysockets/baileys';
import { connectPostgres } from '../../src/store/postgres.js';
import { postgresStoreEnv, waitFor } from '../helpers/daemon.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const RUNS = Number(process.env.RUNS ?? 2);
const BURST = Number(process.env.BURST ?? 200);
const ACCOUNT = '15550470000';
const SESSION = 'crash';
/** how long a run waits for the redelivered stanzas to be confirmed after the restart */
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 60_000);

const messageId = () => `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;

interface Trap {
  matches(node: BinaryNode): boolean;
  at: number;
  seen: number;
  fired(): void;
}

interface RunFigures {
  kind: 'inbound' | 'outbound';
  run: number;
  killedAt: number;
  /** stanzas of the burst the emulator counts as confirmed */
  confirmed: number;
  /** confirmed but missing from the store (inbound) or not delivered in it (outbound) */
  lostInStore: number;
  /** confirmed but never delivered to the webhook */
  lostInWebhooks: number;
  /** not confirmed once the run settled (WhatsApp still holds them) */
  unconfirmed: number;
  /** of those, already in the store */
  unconfirmedStored?: number;
  duplicateWebhooks: number;
  /** stored messages WhatsApp delivered again and that were confirmed from the store (their keys were spent) */
  confirmedFromStore?: number;
}

describe('baileys: inbound messages and acks survive kill -9', () => {
  let target: BaileysTarget;
  let receiver: Receiver;
  let device = '';
  let trap: Trap | undefined;
  const figures: RunFigures[] = [];

  /** resolves once the daemon was killed at the `at`-th stanza from the device that `matches` (or after a minute without it) */
  const killAt = (at: number, matches: (node: BinaryNode) => boolean): Promise<void> =>
    new Promise((fired) => {
      const late = setTimeout(() => {
        console.log(`the ${at}th confirmation never came (${trap?.seen} seen): killing now`);
        trap = undefined;
        target.daemon.child.kill('SIGKILL');
        fired();
      }, 60_000);
      trap = { matches, at, seen: 0, fired: () => (clearTimeout(late), fired()) };
    });

  before(async () => {
    receiver = await startReceiver();
    target = await startBaileysTarget({
      // CRASH_LOG_LEVEL=debug (with ENGINE_TEST_LOG=<file>) keeps the daemons' debug logs, Baileys' included
      ...(process.env.CRASH_LOG_LEVEL ? { env: { GATEWAY_LOG_LEVEL: process.env.CRASH_LOG_LEVEL } } : {}),
      emulator: {
        intercept(node, from) {
          if (trap && from === device && trap.matches(node) && ++trap.seen === trap.at) {
            // synchronously, before the emulator even handles the confirmation it just read
            target.daemon.child.kill('SIGKILL');
            const { fired } = trap;
            trap = undefined;
            fired();
          }
          return false;
        },
      },
    });
    await target.pairedSession(SESSION, ACCOUNT);
    device = target.emu.control.devices(ACCOUNT)[0]!.jid;
    const hook = await target.daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/hook`, events: ['message.received', 'message.ack'] });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
  });

  after(async () => {
    if (figures.length) {
      const sum = (kind: RunFigures['kind'], field: keyof RunFigures) => figures.filter((f) => f.kind === kind).reduce((n, f) => n + (f[field] as number), 0);
      for (const kind of ['inbound', 'outbound'] as const) {
        const runs = figures.filter((f) => f.kind === kind).length;
        if (!runs) continue;
        console.log(
          `${kind}: ${runs} runs of ${BURST}, killed at a random confirmation: confirmed ${sum(kind, 'confirmed')}, lost in the store ${sum(kind, 'lostInStore')}, ` +
            `lost in the webhooks ${sum(kind, 'lostInWebhooks')}, still unconfirmed ${sum(kind, 'unconfirmed')}, duplicate webhook deliveries ${sum(kind, 'duplicateWebhooks')}`,
        );
      }
    }
    await target?.close();
    await receiver?.close();
  });

  const connected = async () => (await target.daemon.request('GET', `/api/sessions/${SESSION}`)).body.data.status === 'CONNECTED';

  /** every stored message of the session, by id */
  const stored = async (): Promise<Map<string, { status: string; chatId: string }>> => {
    const all = new Map<string, { status: string; chatId: string }>();
    for (let offset = 0; ; offset += 1000) {
      const res = await target.daemon.request('GET', `/api/sessions/${SESSION}/messages?limit=1000&offset=${offset}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const page = res.body.data as Array<{ messageId: string; status: string; chatId: string }>;
      for (const m of page) all.set(m.messageId, { status: m.status, chatId: m.chatId });
      if (page.length < 1000) return all;
    }
  };

  const webhookEvents = (event: string, ids: Set<string>) => receiver.on('/hook').filter((d) => d.json?.event === event && ids.has(d.json.payload?.messageId));

  const confirmedIds = (tag: string, ids: Set<string>, type?: string) =>
    new Set(target.emu.control.confirmations(device).filter((c) => c.tag === tag && c.type === type && ids.has(c.id)).map((c) => c.id));

  const restart = async () => {
    const since = Date.now();
    await target.killAndRestart();
    // the killed run left the session CONNECTED in the store; in a cluster (PostgreSQL) it stays so until a node adopts
    // it: CONNECTED counts once the restarted daemon has logged in again
    await waitFor(async () => target.emu.control.stats(since).connectionAttempts > 0 && (await connected()), 120_000, `${SESSION} CONNECTED again`);
  };

  const settle = async (done: () => Promise<boolean> | boolean) => {
    await waitFor(done, SETTLE_MS, 'the burst to settle').catch(() => undefined);
  };

  it(`keeps every message it confirmed (${RUNS} runs, ${BURST} messages in)`, async () => {
    const account = target.emu.control.account(ACCOUNT)!;
    for (let run = 0; run < RUNS; run += 1) {
      // a new contact every run: its first message carries a pre-key, used up by the first decryption
      const contact = `1555048${String(run).padStart(4, '0')}`;
      target.emu.control.createAccount({ phone: contact, pushName: `Sender ${run}` });
      const ids = Array.from({ length: BURST }, messageId);
      const idSet = new Set(ids);
      const at = 1 + Math.floor(Math.random() * (BURST - 1));
      const killed = killAt(at, (node) => node.tag === 'receipt' && (!node.attrs.type || node.attrs.type === 'inactive') && idSet.has(node.attrs.id ?? ''));
      for (const [i, id] of ids.entries()) await target.emu.control.send(contact, account.jid, `burst ${run} #${i}`, { id });
      await killed;
      await restart();

      await settle(async () => confirmedIds('message', idSet).size === BURST);
      const confirmed = confirmedIds('message', idSet);
      // what is stored reaches the webhooks (its outbox rows were committed with it)
      await settle(async () => {
        const inStore = [...(await stored()).keys()].filter((id) => idSet.has(id));
        const hooked = new Set(webhookEvents('message.received', idSet).map((d) => d.json.payload.messageId as string));
        return inStore.every((id) => hooked.has(id));
      });
      const inStore = await stored();
      const deliveries = webhookEvents('message.received', idSet).map((d) => d.json.payload.messageId as string);
      const hooked = new Set(deliveries);
      const result: RunFigures = {
        kind: 'inbound',
        run,
        killedAt: at,
        confirmed: confirmed.size,
        lostInStore: [...confirmed].filter((id) => !inStore.has(id)).length,
        lostInWebhooks: [...confirmed].filter((id) => !hooked.has(id)).length,
        unconfirmed: BURST - confirmed.size,
        unconfirmedStored: ids.filter((id) => !confirmed.has(id) && inStore.has(id)).length,
        duplicateWebhooks: deliveries.length - hooked.size,
        confirmedFromStore: (target.daemon.output().match(/did not decrypt: confirming it/g) ?? []).length,
      };
      figures.push(result);
      console.log(JSON.stringify(result));
    }
    // every run goes first, so the figures are complete
    const runs = figures.filter((f) => f.kind === 'inbound');
    assert.deepEqual(runs.filter((f) => f.lostInStore).map((f) => f.run), [], 'runs with messages confirmed to WhatsApp but not stored');
    assert.deepEqual(runs.filter((f) => f.lostInWebhooks).map((f) => f.run), [], 'runs with messages confirmed to WhatsApp but never delivered to the webhook');
    // and nothing is stuck: every message of the burst was decrypted, stored and confirmed in the end
    assert.deepEqual(runs.filter((f) => f.unconfirmed).map((f) => f.run), [], 'runs with messages WhatsApp still holds after the restart');
  });

  it(`keeps every delivery ack it confirmed (${RUNS} runs, ${BURST} sends out)`, async () => {
    for (let run = 0; run < RUNS; run += 1) {
      const contact = `1555049${String(run).padStart(4, '0')}`;
      target.emu.control.createAccount({ phone: contact, pushName: `Reader ${run}` });
      const at = 1 + Math.floor(Math.random() * (BURST - 1));
      // the device's ack of a delivery receipt (only this contact's come in during the run)
      const killed = killAt(at, (node) => node.tag === 'ack' && node.attrs.class === 'receipt' && !node.attrs.type);
      const sent = new Set<string>();
      for (let i = 0; i < BURST; i += 1) {
        const res = await target.daemon.request('POST', '/api/messages/send', { session: SESSION, chatId: `+${contact}`, type: 'text', text: `send ${run} #${i}` }).catch(() => undefined);
        if (res?.status !== 200) break; // killed
        sent.add(res.body.data.messageId as string);
      }
      await killed;
      await restart();

      const delivered = (status: string | undefined) => status === 'delivered' || status === 'read';
      await settle(async () => {
        const inStore = await stored();
        return [...sent].every((id) => delivered(inStore.get(id)?.status));
      });
      const inStore = await stored();
      const storedIds = new Set([...inStore.keys()].filter((id) => inStore.get(id)!.chatId.startsWith(contact)));
      // confirmed delivery receipts of messages the store holds (a send cut by the kill may not be stored: not an ack's loss)
      const confirmed = new Set([...confirmedIds('receipt', storedIds)]);
      const acks = webhookEvents('message.ack', storedIds).filter((d) => d.json.payload.status === 'delivered');
      const acked = new Set(acks.map((d) => d.json.payload.messageId as string));
      const result: RunFigures = {
        kind: 'outbound',
        run,
        killedAt: at,
        confirmed: confirmed.size,
        lostInStore: [...confirmed].filter((id) => !delivered(inStore.get(id)?.status)).length,
        lostInWebhooks: [...confirmed].filter((id) => !acked.has(id)).length,
        unconfirmed: [...sent].filter((id) => !delivered(inStore.get(id)?.status)).length,
        duplicateWebhooks: acks.length - acked.size,
      };
      figures.push(result);
      console.log(JSON.stringify(result));
    }
    const runs = figures.filter((f) => f.kind === 'outbound');
    assert.deepEqual(runs.filter((f) => f.lostInStore).map((f) => f.run), [], 'runs with delivery acks confirmed to WhatsApp but sends not delivered in the store');
    assert.deepEqual(runs.filter((f) => f.lostInWebhooks).map((f) => f.run), [], 'runs with delivery acks confirmed to WhatsApp but never delivered to the webhook');
    assert.deepEqual(runs.filter((f) => f.unconfirmed).map((f) => f.run), [], 'runs with sends still not delivered after the restart');
  });

  /**
   * Another writer holds a lock: on SQLite the write lock, so every write of the daemon fails (SQLITE_BUSY after its
   * busy_timeout); on PostgreSQL (the suite's second pass) the messages table, so the daemon's commits wait.
   */
  const lockStore = async (): Promise<() => Promise<void>> => {
    const url = postgresStoreEnv(target.dataDir).GATEWAY_DATABASE_URL;
    if (url) {
      const pg = connectPostgres(url, { max: 1 });
      const connection = await pg.reserve();
      await connection.unsafe('BEGIN');
      await connection.unsafe('LOCK TABLE messages IN EXCLUSIVE MODE');
      return async () => {
        await connection.unsafe('COMMIT');
        connection.release();
        await pg.end();
      };
    }
    const sqlite = new Database(join(target.dataDir, 'gateway.db'));
    sqlite.exec('BEGIN IMMEDIATE');
    return async () => {
      sqlite.exec('ROLLBACK');
      sqlite.close();
    };
  };

  it('confirms nothing while the store cannot commit, and everything once it can', async () => {
    const account = target.emu.control.account(ACCOUNT)!;
    const contact = '15550489999';
    target.emu.control.createAccount({ phone: contact, pushName: 'Locked out' });
    // a first message sets up the contact's Signal session and LID mapping: the next ones only write what they confirm
    const first = messageId();
    await target.emu.control.send(contact, account.jid, 'before the lock', { id: first });
    await waitFor(() => confirmedIds('message', new Set([first])).size === 1, 30_000, 'the first message confirmed');
    const ids = Array.from({ length: 3 }, messageId);
    const idSet = new Set(ids);
    const unlock = await lockStore();
    try {
      for (const [i, id] of ids.entries()) await target.emu.control.send(contact, account.jid, `locked #${i}`, { id });
      await new Promise((resolve) => setTimeout(resolve, 15_000));
      assert.deepEqual([...confirmedIds('message', idSet)], [], 'messages confirmed to WhatsApp while the store could not commit');
      assert.equal(target.daemon.child.exitCode, null, `the daemon died: ${target.daemon.output().slice(-2000)}`);
    } finally {
      await unlock();
    }
    await waitFor(() => confirmedIds('message', idSet).size === ids.length, 120_000, 'the messages confirmed once the store commits');
    const inStore = await stored();
    assert.deepEqual(ids.filter((id) => !inStore.has(id)), [], 'confirmed but not stored');
    await waitFor(() => new Set(webhookEvents('message.received', idSet).map((d) => d.json.payload.messageId)).size === ids.length, 30_000, 'their webhooks');
    // a store failure that escaped as an uncaught exception or rejection would have ended the daemon
    assert.equal(target.daemon.child.exitCode, null, `the daemon died: ${target.daemon.output().slice(-2000)}`);
  });
});
