// A stand-in for the gateway daemon in a child process: plain Baileys that knows nothing about the emulator
// (trust and URL come only from the preload and NODE_EXTRA_CA_CERTS). Prints QR/OPEN/CLOSE/RECV/MEDIA lines,
// echoes texts, hashes downloaded images, reconnects unless logged out (then exits 0).
import { createHash } from 'node:crypto';
import makeWASocket, { DisconnectReason, downloadMediaMessage } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { closeCode } from './harness.js';
import { memoryAuth } from './memory-auth.js';

const auth = memoryAuth();
const say = (line: string) => process.stdout.write(`${line}\n`);

function start(): void {
  const sock = makeWASocket({
    auth: auth.state,
    logger: pino({ level: process.env.WA_EMULATOR_BAILEYS_LOG ?? 'silent' }),
    shouldSyncHistoryMessage: () => false,
    markOnlineOnConnect: false,
  });
  sock.ev.on('connection.update', (update) => {
    if (update.qr) say(`QR ${update.qr}`);
    if (update.connection === 'open') say(`OPEN ${sock.user?.id}`);
    if (update.connection === 'close') {
      const code = closeCode(update);
      say(`CLOSE ${code}`);
      if (code === DisconnectReason.loggedOut) process.exit(0);
      start();
    }
  });
  sock.ev.on('messages.upsert', async ({ messages, type }) => {
    for (const m of messages) {
      if (m.key.fromMe || type !== 'notify' || !m.key.remoteJid) continue;
      if (m.message?.imageMessage) {
        const bytes = await downloadMediaMessage(m, 'buffer', {});
        const sha = createHash('sha256').update(bytes).digest('hex');
        say(`MEDIA ${sha}`);
        await sock.sendMessage(m.key.remoteJid, { text: `got image ${sha}` });
        continue;
      }
      const text = m.message?.conversation ?? m.message?.extendedTextMessage?.text;
      if (!text) continue;
      say(`RECV ${text}`);
      await sock.sendMessage(m.key.remoteJid, { text: `echo: ${text}` });
    }
  });
}

start();
