// Baileys auth state over the session's SQLite key/value store: creds plus every signal key type, each set() one transaction.
import { BufferJSON, initAuthCreds, proto, type AuthenticationCreds, type SignalDataTypeMap, type SignalKeyStore } from '@whiskeysockets/baileys';
import type { AuthStateStore } from '../types.js';

const CREDS_KEY = 'baileys:creds';
const keyOf = (type: string, id: string) => `baileys:${type}:${id}`;

export interface SqliteAuthState {
  creds: AuthenticationCreds;
  keys: SignalKeyStore;
  saveCreds(): void;
  /** true once the device is linked to an account */
  isPaired(): boolean;
}

export function loadAuthState(store: AuthStateStore): SqliteAuthState {
  const raw = store.get(CREDS_KEY);
  const creds: AuthenticationCreds = raw ? (JSON.parse(raw, BufferJSON.reviver) as AuthenticationCreds) : initAuthCreds();
  const keys: SignalKeyStore = {
    async get(type, ids) {
      const found = store.getMany(ids.map((id) => keyOf(type, id)));
      const result: { [id: string]: SignalDataTypeMap[typeof type] } = {};
      for (const id of ids) {
        const value = found.get(keyOf(type, id));
        if (value === undefined) continue;
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
      store.set(entries);
    },
    async clear() {
      store.clear();
    },
  };
  return {
    creds,
    keys,
    saveCreds: () => store.set({ [CREDS_KEY]: JSON.stringify(creds, BufferJSON.replacer) }),
    isPaired: () => Boolean(creds.me?.id && creds.account),
  };
}
