// In-memory Baileys auth state (creds + Signal key store) for test clients and the emulator's virtual phones.
import {
  BufferJSON,
  initAuthCreds,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';

export interface MemoryAuth {
  state: AuthenticationState;
  /** raw key rows, `${type}-${id}` → value */
  store: Map<string, unknown>;
  /** forget everything, as a logged-out client would */
  reset(): void;
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value, BufferJSON.replacer), BufferJSON.reviver) as T;

/** A key store that round-trips values through JSON like a persistent store would (so Buffers come back revived). */
export function memoryKeyStore(store = new Map<string, unknown>()): SignalKeyStore {
  return {
    get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        let value = store.get(`${type}-${id}`);
        if (value === undefined) continue;
        value = clone(value);
        if (type === 'app-state-sync-key') value = proto.Message.AppStateSyncKeyData.fromObject(value as object);
        out[id] = value as SignalDataTypeMap[T];
      }
      return out;
    },
    set(data: SignalDataSet) {
      for (const [type, rows] of Object.entries(data)) {
        for (const [id, value] of Object.entries(rows ?? {})) {
          if (value === null || value === undefined) store.delete(`${type}-${id}`);
          else store.set(`${type}-${id}`, clone(value));
        }
      }
    },
    clear() {
      store.clear();
    },
  };
}

/** Fresh creds (or `creds`) with an in-memory key store. Pass `state` as makeWASocket's `auth`. */
export function memoryAuth(creds: AuthenticationCreds = initAuthCreds()): MemoryAuth {
  const store = new Map<string, unknown>();
  const state: AuthenticationState = { creds, keys: memoryKeyStore(store) };
  return {
    state,
    store,
    reset() {
      store.clear();
      state.creds = initAuthCreds();
    },
  };
}
