// Runs the emulator on its own, for manual runs of the daemon against it:
//   node dist/test/support/wa-emulator/serve.js [trust-dir]
//   (optional: PORT, MEDIA_PORT, WA_EMULATOR_LOG=1, WA_EMULATOR_QUERY_TIMEOUT_MS: how long server→client iqs wait)
// Prints one JSON line: URLs, CA key, and the env a daemon needs (trust files are written into trust-dir).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from './server.js';

const emulator = await startEmulator({
  ...(process.env.PORT ? { port: Number(process.env.PORT) } : {}),
  ...(process.env.MEDIA_PORT ? { mediaPort: Number(process.env.MEDIA_PORT) } : {}),
  ...(process.env.WA_EMULATOR_QUERY_TIMEOUT_MS ? { queryTimeoutMs: Number(process.env.WA_EMULATOR_QUERY_TIMEOUT_MS) } : {}),
});
const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'wa-emulator-'));
process.stdout.write(
  `${JSON.stringify({
    wsUrl: emulator.wsUrl,
    controlUrl: emulator.controlUrl,
    mediaHost: emulator.mediaHost,
    caPublicKeyHex: emulator.caPublicKey.toString('hex'),
    daemonEnv: emulator.daemonEnv(dir),
  })}\n`,
);
const stop = () => void emulator.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
