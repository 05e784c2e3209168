// Engine targets for the conformance suite and the lifecycle tests: a daemon on the sandbox engine, or on the Baileys
// engine wired to a WhatsApp Web emulator through env only (preload, trust files, GATEWAY_BAILEYS_WS_URL).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { startEmulator, type EmulatorOptions, type WaEmulator } from '../support/wa-emulator/index.js';
import type { EngineTarget } from './conformance.js';

export interface BaileysTarget extends EngineTarget {
  emu: WaEmulator;
  dataDir: string;
  /** SIGKILL and start again on the same data dir and port */
  killAndRestart(): Promise<TestDaemon>;
  /** creates a session and pairs it by QR as `phone`; resolves once CONNECTED */
  pairedSession(session: string, phone: string, pushName?: string): Promise<void>;
}

/** libsignal (inside the emulator's virtual phones, in this process) prints session records on re-keying: noise. */
export function quietLibsignal(): void {
  for (const method of ['info', 'warn'] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && /^(Closing session|Opening session|Closing open session|Removing old closed session)/.test(args[0])) return;
      original(...args);
    };
  }
}

/** an incoming message nobody could decrypt is given up on after 3 s (the decryption scenario waits for that) */
const UNDECRYPTABLE_AFTER = { GATEWAY_UNDECRYPTABLE_AFTER_SECONDS: '3' };

export async function startBaileysTarget(options: { config?: string; env?: Record<string, string>; emulator?: EmulatorOptions } = {}): Promise<BaileysTarget> {
  quietLibsignal();
  const emu = await startEmulator(options.emulator);
  const dataDir = mkdtempSync(join(tmpdir(), 'engine-baileys-'));
  const port = await freePort();
  const env = { ...emu.daemonEnv(dataDir), GATEWAY_BAILEYS_WS_URL: emu.wsUrl, GATEWAY_BAILEYS_MEDIA_HOSTS: emu.mediaHost, GATEWAY_DEFAULT_ENGINE: 'baileys', ...UNDECRYPTABLE_AFTER, ...options.env };
  // the daemon imports Baileys before it listens (a restored session needs it): slow on a loaded machine
  const boot = () => startDaemon({ dataDir, port, env, listenTimeoutMs: 60_000, ...(options.config !== undefined ? { config: options.config } : {}) });
  let daemon: TestDaemon;
  try {
    daemon = await boot();
  } catch (err) {
    await emu.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const ensureAccount = (phone: string) => {
    if (!emu.control.account(phone)) emu.control.createAccount({ phone, pushName: `Phone ${phone.slice(-4)}` });
  };
  const keepLog = (suffix: string) => {
    // ENGINE_TEST_LOG=<file> keeps each daemon's output for debugging
    if (process.env.ENGINE_TEST_LOG) writeFileSync(`${process.env.ENGINE_TEST_LOG}.${suffix}`, daemon.output());
  };
  let restarts = 0;
  /** the account's linked companion (one per account in these tests) */
  const deviceOf = (phone: string) => {
    const device = emu.control.devices(phone)[0];
    if (!device) throw new Error(`no linked device of ${phone}`);
    return device.jid;
  };
  const target: BaileysTarget = {
    emu,
    dataDir,
    get daemon() {
      return daemon;
    },
    engine: 'baileys',
    async scanQr(_session, qr, phone) {
      ensureAccount(phone);
      await emu.control.scanQr(qr, phone);
    },
    async enterCode(_session, code, phone) {
      ensureAccount(phone);
      await emu.control.enterPairingCode(phone, code);
    },
    async restartDaemon() {
      await daemon.stop();
      keepLog(String(restarts++));
      daemon = await boot();
      return daemon;
    },
    async addContact(phone) {
      ensureAccount(phone);
    },
    async contactSends(phone, _session, accountPhone, text, options = {}) {
      ensureAccount(phone);
      const account = emu.control.account(accountPhone);
      if (!account) throw new Error(`no emulator account ${accountPhone}`);
      await emu.control.send(phone, options.senderLidOnly ? account.lid : account.jid, text, { withoutAlt: options.senderLidOnly === true });
    },
    async killAndRestart() {
      await daemon.kill();
      keepLog(String(restarts++));
      daemon = await boot();
      return daemon;
    },
    async syncHistoryImage(_session, phone, image, caption) {
      const media = await emu.control.uploadMedia(image, 'image');
      const contact = '15550199999';
      ensureAccount(contact);
      await emu.control.syncHistory(phone, [
        {
          key: { remoteJid: `${contact}@s.whatsapp.net`, fromMe: false, id: `3EB0${randomBytes(10).toString('hex').toUpperCase()}` },
          messageTimestamp: Math.floor(Date.now() / 1000) - 3600,
          message: { imageMessage: { ...media, mimetype: 'image/png', caption } },
        },
      ]);
    },
    async contactCalls(phone, _session, accountPhone, options = {}) {
      ensureAccount(phone);
      return emu.control.placeCall(phone, accountPhone, { isVideo: options.isVideo ?? false }).callId;
    },
    async callEnds(_phone, _session, callId, how) {
      emu.control.endCall(callId, how);
    },
    async callerSawReject(_phone, _session, callId) {
      await emu.control.waitForCallRejected(callId, 10_000);
    },
    async contactReceived(phone, _session, messageId, text) {
      await emu.control.waitForInbox(phone, (m) => m.id === messageId && m.text === text, 10_000);
    },
    async seedOlderMessages(_session, phone, contact, messages) {
      ensureAccount(contact);
      const dayAgo = Math.floor(Date.now() / 1000) - 86_400;
      emu.control.seedOlderMessages(
        phone,
        contact,
        messages.map((m, i) => ({
          key: { remoteJid: `${contact}@s.whatsapp.net`, fromMe: m.fromMe === true, id: `3EB0${randomBytes(10).toString('hex').toUpperCase()}` },
          messageTimestamp: dayAgo - (messages.length - 1 - i) * 60,
          message: { conversation: m.text },
        })),
      );
    },
    async failNextSend(_session, phone, to, fault) {
      emu.control.failMessages(fault === 'no-ack' ? { kind: 'withhold' } : { kind: 'nack', code: fault.nack }, { from: phone, to });
    },
    async releaseWithheld() {
      await emu.control.releaseWithheld();
    },
    async contactSendsUndecryptable(phone, _session, accountPhone, text, recovered) {
      ensureAccount(phone);
      return (await emu.control.sendUndecryptable(phone, accountPhone, text, { answerRetries: recovered })).id;
    },
    async contactAsksAgain(phone, _session, count) {
      ensureAccount(phone);
      emu.control.failNextDecryption(phone, count);
    },
    async pairedSession(session, phone, pushName) {
      if (!emu.control.account(phone)) emu.control.createAccount({ phone, pushName: pushName ?? `Phone ${phone.slice(-4)}` });
      const created = await daemon.request('POST', '/api/sessions', { name: session, start: true, engine: 'baileys' });
      if (created.status !== 201) throw new Error(`create ${session}: ${created.status} ${JSON.stringify(created.body)}`);
      const qr = await waitFor(async () => {
        const res = await daemon.request('GET', `/api/sessions/${session}/pairing/qr`);
        return res.status === 200 ? (res.body.data.qr as string) : undefined;
      }, 10_000, `${session} QR`);
      await emu.control.scanQr(qr, phone);
      await waitFor(async () => (await daemon.request('GET', `/api/sessions/${session}`)).body.data.status === 'CONNECTED', 10_000, `${session} CONNECTED`);
    },
    async forceLogout(_session, phone, reason) {
      if (!emu.control.logOut(deviceOf(phone), reason)) throw new Error(`${phone} has no connected device to log out`);
    },
    async silence(_session, phone, until) {
      if (!emu.control.silence(deviceOf(phone), until === 'reconnect' ? 1 : 2)) throw new Error(`${phone} has no active connection to silence`);
    },
    async chatActionsReceived(phone) {
      return emu.control.appStatePatches(phone).flatMap((p) => {
        const action = chatActionOf(p.index[0], p.value);
        return action && p.index[1] ? [{ action, chatId: p.index[1] }] : [];
      });
    },
    async close() {
      keepLog('last');
      await daemon.cleanup();
      await emu.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return target;
}

export async function startSandboxTarget(options: { config?: string; env?: Record<string, string> } = {}): Promise<EngineTarget> {
  const dataDir = mkdtempSync(join(tmpdir(), 'engine-sandbox-'));
  const port = await freePort();
  const boot = () => startDaemon({ dataDir, port, env: { GATEWAY_DEFAULT_ENGINE: 'sandbox', ...UNDECRYPTABLE_AFTER, ...options.env }, ...(options.config !== undefined ? { config: options.config } : {}) });
  const control = async (session: string, fault: string, body: Record<string, unknown>) => {
    const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/${fault}`, body);
    if (res.status !== 200) throw new Error(`sandbox ${fault} ${session}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  let daemon: TestDaemon = await boot();
  const pair = async (session: string, body: Record<string, unknown>) => {
    const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/pair`, body);
    if (res.status !== 200) throw new Error(`sandbox pair ${session}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  return {
    get daemon() {
      return daemon;
    },
    engine: 'sandbox',
    scanQr: (session, _qr, phone) => pair(session, { phoneNumber: phone }),
    async syncHistoryImage(session, _phone, image, caption) {
      const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/history`, { messages: 0, media: [{ type: 'image', base64: image.toString('base64'), caption }] });
      if (res.status !== 200) throw new Error(`sandbox history ${session}: ${res.status} ${JSON.stringify(res.body)}`);
    },
    async seedOlderMessages(session, _phone, contact, messages) {
      const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/history/older`, { chatId: `+${contact}`, messages });
      if (res.status !== 200) throw new Error(`sandbox older history ${session}: ${res.status} ${JSON.stringify(res.body)}`);
    },
    enterCode: (session, code) => pair(session, { code }),
    async restartDaemon() {
      await daemon.stop();
      daemon = await boot();
      return daemon;
    },
    // every plausible number is a virtual contact of the sandbox network
    addContact: async () => {},
    async contactSends(phone, session, _accountPhone, text, options = {}) {
      const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/inbound`, { from: `+${phone}`, type: 'text', text, ...(options.senderLidOnly ? { senderLidOnly: true } : {}) });
      if (res.status !== 200) throw new Error(`sandbox inbound: ${res.status} ${JSON.stringify(res.body)}`);
    },
    async contactCalls(phone, session, _accountPhone, options = {}) {
      const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/call`, { from: `+${phone}`, outcome: 'received', isVideo: options.isVideo ?? false });
      if (res.status !== 200) throw new Error(`sandbox call: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data.callId as string;
    },
    async callEnds(phone, session, callId, how) {
      const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/call`, { from: `+${phone}`, outcome: how === 'timeout' ? 'missed' : 'cancelled', callId });
      if (res.status !== 200) throw new Error(`sandbox call end: ${res.status} ${JSON.stringify(res.body)}`);
    },
    async callerSawReject(phone, session, callId) {
      await waitFor(async () => {
        const res = await daemon.request('GET', `/api/sandbox/sessions/${session}/calls/${callId}`);
        if (res.status !== 200) throw new Error(`sandbox call view: ${res.status} ${JSON.stringify(res.body)}`);
        if (res.body.data.from !== `+${phone}`) throw new Error(`call ${callId} is from ${res.body.data.from}`);
        return res.body.data.callerSaw === 'rejected';
      }, 10_000, `${phone} sees call ${callId} rejected`);
    },
    async contactReceived(_phone, session, messageId, text) {
      // the virtual contact's phone acknowledges what reached it (delivered)
      await waitFor(async () => {
        const res = await daemon.request('GET', `/api/sessions/${session}/messages/${messageId}`);
        return res.status === 200 && res.body.data.text === text && ['delivered', 'read'].includes(res.body.data.status);
      }, 10_000, `message ${messageId} delivered`);
    },
    async contactSendsUndecryptable(phone, session, _accountPhone, text, recovered) {
      const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/faults/undecryptable`, { from: `+${phone}`, recovered, text, kind: 'invalid_prekey' });
      if (res.status !== 200) throw new Error(`sandbox undecryptable fault: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data.messageId as string;
    },
    async contactAsksAgain(phone, session, count) {
      const res = await daemon.request('POST', `/api/sandbox/sessions/${session}/faults/retry-receipts`, { chatId: `+${phone}`, count });
      if (res.status !== 200) throw new Error(`sandbox retry-receipts fault: ${res.status} ${JSON.stringify(res.body)}`);
    },
    // the simulated network lives in the daemon: what reached it shows only in the daemon's answers and events
    chatActionsReceived: async () => undefined,
    failNextSend: (session, _phone, to, fault) => (fault === 'no-ack' ? control(session, 'faults/no-ack', { chatId: `+${to}` }) : control(session, 'faults/nack', { chatId: `+${to}`, code: fault.nack })),
    releaseWithheld: (session) => control(session, 'faults/release', {}),
    forceLogout: (session, _phone, reason) => control(session, 'disconnect', { logoutReason: reason }),
    silence: (session, _phone, until) => control(session, 'faults/silence', { until }),
    async close() {
      await daemon.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The chat action an app-state mutation carries (its index names the kind, its value the direction). */
function chatActionOf(kind: string | undefined, value: Record<string, any>): string | undefined {
  switch (kind) {
    case 'archive':
      return value.archiveChatAction?.archived ? 'archive' : 'unarchive';
    case 'pin_v1':
      return value.pinAction?.pinned ? 'pin' : 'unpin';
    case 'mute':
      return value.muteAction?.muted ? 'mute' : 'unmute';
    case 'markChatAsRead':
      return value.markChatAsReadAction?.read ? 'read' : 'unread';
    default:
      return undefined;
  }
}
