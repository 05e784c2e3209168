// Baileys auth state over the session's SQLite key/value store: creds plus every signal key type, each set() one transaction.
import { BufferJSON, initAuthCreds, proto, type AuthenticationCreds, type SignalDataTypeMap, type SignalKeyStore } from '@whiskeysockets/baileys';
import type { AuthStateStore } from '../types.js';
import { SharedAsyncStorage } from './async-storage.js';

const CREDS_KEY = 'baileys:creds';
const keyOf = (type: string, id: string) => `baileys:${type}:${id}`;

/** Key writes held in memory until the message that caused them is committed (see `staged`). */
export type StagedKeys = Map<string, string | null>;

export interface SqliteAuthState {
  creds: AuthenticationCreds;
  keys: SignalKeyStore;
  /** writes the whole creds object durably; settles once it is committed */
  saveCreds(): Promise<void>;
  /** true once the device is linked to an account */
  isPaired(): boolean;
  /**
   * Runs `work` (the decryption of one received message) with its key writes held in `batch` instead of written:
   * they are read back from memory, and `commitStaged` writes them with the message's own events.
   */
  staged<R>(batch: StagedKeys, work: () => Promise<R>): Promise<R>;
  /**
   * Writes what a batch holds inside the open tick transaction (with the events written in the same tick) and empties
   * it; a promise when the write waits on the cluster's lease check (AuthStateStore.stage).
   */
  commitStaged(batch: StagedKeys): Promise<void> | undefined;
  /** forgets every batch not yet written (their message was not committed: WhatsApp delivers it again) */
  dropStaged(): void;
}

export async function loadAuthState(store: AuthStateStore): Promise<SqliteAuthState> {
  const raw = await store.get(CREDS_KEY);
  const creds: AuthenticationCreds = raw ? (JSON.parse(raw, BufferJSON.reviver) as AuthenticationCreds) : initAuthCreds();
  const staging = new SharedAsyncStorage<StagedKeys>();
  /** batches staged and not yet written, oldest first */
  let pending: StagedKeys[] = [];
  /** batches whose work is still running (more writes may come) */
  const running = new Set<StagedKeys>();
  const stagedValue = (key: string): string | null | undefined => {
    for (let i = pending.length - 1; i >= 0; i -= 1) if (pending[i]!.has(key)) return pending[i]!.get(key);
    return undefined;
  };
  const keys: SignalKeyStore = {
    async get(type, ids) {
      const found = new Map<string, string>();
      // a batch staged when the read began may have been written (and dropped from memory) while it waited: read again
      for (let unread = ids; unread.length; ) {
        const keys = unread.filter((id) => stagedValue(keyOf(type, id)) === undefined).map((id) => keyOf(type, id));
        if (!keys.length) break;
        for (const [key, value] of await store.getMany(keys)) found.set(key, value);
        const asked = new Set(keys);
        unread = unread.filter((id) => !asked.has(keyOf(type, id)) && stagedValue(keyOf(type, id)) === undefined);
      }
      const result: { [id: string]: SignalDataTypeMap[typeof type] } = {};
      for (const id of ids) {
        const staged = stagedValue(keyOf(type, id));
        const value = staged === undefined ? found.get(keyOf(type, id)) : staged;
        if (value === undefined || value === null) continue;
        let parsed = JSON.parse(value, BufferJSON.reviver);
        if (type === 'app-state-sync-key') parsed = proto.Message.AppStateSyncKeyData.fromObject(parsed);
        result[id] = parsed;
      }
      return result;
    },
    async set(data) {
      const entries: Record<string, string | null> = {};
      for (const [type, values] of Object.entries(data)) {
        for (const [id, value] of Object.entries(values ?? {})) {
          entries[keyOf(type, id)] = value === null || value === undefined ? null : JSON.stringify(value, BufferJSON.replacer);
        }
      }
      const batch = staging.getStore();
      if (batch) {
        for (const [key, value] of Object.entries(entries)) batch.set(key, value);
        return;
      }
      // a durable write carries the newest value: an older staged one must not overwrite it later
      for (const staged of pending) for (const key of Object.keys(entries)) staged.delete(key);
      await store.set(entries);
    },
    async clear() {
      pending = [];
      await store.clear();
    },
  };
  return {
    creds,
    keys,
    saveCreds: () => store.set({ [CREDS_KEY]: JSON.stringify(creds, BufferJSON.replacer) }),
    isPaired: () => Boolean(creds.me?.id && creds.account),
    async staged(batch, work) {
      pending.push(batch);
      running.add(batch);
      try {
        return await staging.run(batch, work);
      } finally {
        running.delete(batch);
      }
    },
    commitStaged(batch) {
      if (!pending.includes(batch)) return undefined;
      const written = batch.size ? store.stage(Object.fromEntries(batch)) : undefined;
      batch.clear();
      if (!running.has(batch)) pending = pending.filter((b) => b !== batch);
      return written;
    },
    dropStaged() {
      pending = [];
      running.clear();
    },
  };
}
