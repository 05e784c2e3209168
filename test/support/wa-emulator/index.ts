// Public surface of the WhatsApp Web emulator for tests (see README.md).
export { startEmulator, PRELOAD_PATH, type WaEmulator, type EmulatorOptions, type DaemonEnv } from './server.js';
export { EmulatorControl, CONTROL_ROUTES, CLOSE_CODES } from './control.js';
export { profile, type CloseCode, type CloseKind, type AddressingMode } from './profile.js';
export { trustEmulator, trustEmulatorCa, trustEmulatorMedia, emulatorHttpsAgent, useEmulatorUrl } from './client-trust.js';
export { unrefLeakedBaileysTimers } from './baileys-workarounds.js';
export { memoryAuth, memoryKeyStore, type MemoryAuth } from './memory-auth.js';
export { TestClient, pairByQr, pairByCode, startWithAliceAndBob, closeAll, waitForConnection, waitForEvent, waitForMessage, closeCode, textOf, type ClientOptions } from './harness.js';
export type { AccountInfo, AccountOptions, DeviceInfo } from './registry.js';
export type { PairingRestart } from './pairing.js';
export type { GroupInfo, GroupRole } from './groups.js';
export type { PhoneMessage, PhoneReceipt, SendResult } from './phones.js';
export type { ChatState } from './presence.js';
export type { StanzaRecord, StanzaFilter, NodeSummary } from './recorder.js';
export { ConnectionStats, type EmulatorStats } from './stats.js';
export type { CallRecord, CallAddressing } from './calls.js';
