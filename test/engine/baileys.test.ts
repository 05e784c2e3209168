// The conformance suite on the Baileys engine, against the WhatsApp Web emulator: the daemon gets the emulator
// through env only (preload, trust files, websocket URL), and the emulator's phone scans the QR or types the code.
import { CONFORMANCE_DAEMON, runEngineSuite } from './conformance.js';
import { startBaileysTarget } from './targets.js';

runEngineSuite({ name: 'baileys', start: () => startBaileysTarget(CONFORMANCE_DAEMON) });
