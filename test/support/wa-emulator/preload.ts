// Preload for a child process (the gateway daemon) under test: `NODE_OPTIONS=--import <file URL of preload.js>`.
// GATEWAY_TEST_WA_CA_FILE names a file holding the emulator's Noise root key (hex) → Baileys trusts it.
// GATEWAY_TEST_WA_URL (optional) becomes Baileys' default waWebSocketUrl.
// Media TLS: set NODE_EXTRA_CA_CERTS to the emulator's certificate file (WaEmulator.daemonEnv does all of this).
// Baileys is resolved from this file's location, i.e. the project's node_modules: the same module instance the daemon loads.
import { readFileSync } from 'node:fs';
import { trustEmulatorCa, useEmulatorUrl } from './client-trust.js';

const caFile = process.env.GATEWAY_TEST_WA_CA_FILE;
if (caFile) {
  trustEmulatorCa(readFileSync(caFile, 'utf8'));
  if (process.env.GATEWAY_TEST_WA_URL) useEmulatorUrl(process.env.GATEWAY_TEST_WA_URL);
}
