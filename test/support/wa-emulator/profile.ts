// Every rule of the emulator that follows a particular Baileys version (7.0.0-rc14) lives here, so an upgrade is one diff.
import {
  NOISE_MODE,
  NOISE_WA_HEADER,
  WA_ADV_ACCOUNT_SIG_PREFIX,
  WA_ADV_DEVICE_SIG_PREFIX,
  WA_CERT_DETAILS,
  type BinaryNode,
} from '@whiskeysockets/baileys';

/** Close codes the control API can inject; each reaches Baileys as `lastDisconnect.error.output.statusCode`. */
export type CloseCode = 401 | 403 | 408 | 428 | 440 | 500 | 503 | 515;

/** The forced logouts the real server makes (the gateway's classification, docs/ENGINES.md). */
export type LogoutReason = 'unlinked' | 'replaced' | 'banned' | 'temporarily_banned' | 'locked' | 'key_error';
export const LOGOUT_REASONS: readonly LogoutReason[] = ['unlinked', 'replaced', 'banned', 'temporarily_banned', 'locked', 'key_error'];

/** How a close is delivered: a `<stream:error>`, a `<failure>` stanza, or a bare WebSocket close (Baileys maps that to 428). */
export type CloseKind = 'stream-error' | 'failure' | 'socket';

export type AddressingMode = 'pn' | 'lid';

export interface QrParts {
  ref: string;
  noiseKeyB64: string;
  identityKeyB64: string;
  advSecretB64: string;
  platformId: string;
}

export const profile = {
  baileysVersion: '7.0.0-rc14',

  /** Noise_XX_25519_AESGCM_SHA256 with WA's prologue; the nonce counter is shared by encrypt and decrypt until mixIntoKey. */
  noise: {
    mode: NOISE_MODE,
    header: NOISE_WA_HEADER,
    /** Baileys checks that the intermediate certificate names this issuer serial. */
    rootSerial: WA_CERT_DETAILS.SERIAL,
  },

  /** Registration: how many QR refs `pair-device` hands out (Baileys ends with 408 when they run out). */
  qrRefCount: 6,

  /** `https://wa.me/settings/linked_devices#ref,noiseKey,identityKey,advSecret,platformId` */
  parseQr(qr: string): QrParts {
    const parts = qr.replace(/^.*#/, '').split(',');
    if (parts.length < 5) throw new Error(`not a Baileys pairing QR: ${qr.slice(0, 60)}`);
    const [ref, noiseKeyB64, identityKeyB64, advSecretB64, platformId] = parts as [string, string, string, string, string];
    return { ref, noiseKeyB64, identityKeyB64, advSecretB64, platformId };
  },

  /** ADV signatures: the account signs `[6,0] ‖ details ‖ companionIdentity`, the companion answers with `[6,1] ‖ details ‖ companionIdentity ‖ accountKey`. */
  adv: {
    accountSignaturePrefix: WA_ADV_ACCOUNT_SIG_PREFIX,
    deviceSignaturePrefix: WA_ADV_DEVICE_SIG_PREFIX,
  },

  /** The pairing-code (link code) flow, phone side. */
  pairingCode: {
    pbkdf2Iterations: 2 << 16,
    bundleKeyInfo: 'link_code_pairing_key_bundle_encryption_key',
    advSecretInfo: 'adv_secret',
    /** Baileys shows 8 Crockford characters; people may type them with a dash. */
    normalise: (code: string) => code.replace(/[-\s]/g, '').toUpperCase(),
  },

  /**
   * Personal accounts learn their push name from app-state sync, which the emulator does not run. Without a name
   * Baileys silently skips `sendPresenceUpdate('available')`, so the emulator puts the push name in the
   * `<biz name>` child of pair-success (Baileys copies it into `creds.me.name`). Business accounts get it anyway.
   */
  pushNameInPairSuccess: true,

  /** The `<platform name>` of pair-success: the primary phone's platform (`smba` marks a business account). */
  phonePlatform: (business: boolean) => (business ? 'smba' : 'android'),

  /** After pair-device-sign the server forces a reconnect with this stream error code. */
  restartAfterPairing: 515 as const,

  /**
   * Queries sent after `<success>` that hold `connection: 'open'` for the query timeout unless answered:
   * `encrypt/count`, the prekey upload, `passive/active` and `encrypt/digest` (which needs a `<digest>` child).
   * `ib offline` must follow the `passive/active` result, or events stay buffered for 30 s.
   */
  offlineMarkerAfterActive: true,

  /**
   * What the phone sends a companion right after its first login, after `ib offline` (Baileys then is in
   * AwaitingInitialSync): an APP_STATE_SYNC_KEY_SHARE (so chatModify works) and an INITIAL_BOOTSTRAP history
   * notification with an inline, empty payload. Without the latter, a client that processes history waits 20 s
   * before it flushes events on a first login.
   */
  phoneBootstrap: { appStateKeyShare: true, historySync: true },

  /** The privacy settings a fresh account reports; `readreceipts=all` makes readMessages send `read`, not `read-self`. */
  defaultPrivacy: {
    readreceipts: 'all',
    last: 'all',
    online: 'all',
    profile: 'all',
    status: 'all',
    groupadd: 'all',
    calladd: 'all',
    messages: 'all',
  } as Record<string, string>,

  /** New groups: Baileys defaults to LID addressing when metadata says nothing. */
  defaultGroupAddressingMode: 'lid' as AddressingMode,

  /**
   * LID vs PN echo rules (read from Baileys, not checked against the real server):
   * a 1:1 stanza keeps the addressing the sender used (`to` a LID: `from` is the sender's LID and `sender_pn` the PN;
   * `to` a PN: `from` is the PN and `sender_lid` the LID). usync echoes the jid form it was asked for.
   */
  senderAltAttr: (mode: AddressingMode) => (mode === 'lid' ? 'sender_pn' : 'sender_lid'),
  participantAltAttr: (mode: AddressingMode) => (mode === 'lid' ? 'participant_pn' : 'participant_lid'),

  /** Media: the upload answer Baileys reads (`url` or `direct_path`). */
  mediaUploadAnswer: (host: string, path: string) => ({ url: `https://${host}${path}`, direct_path: path }),

  /**
   * Timers Baileys leaves pending after `end()`, which keep a finished test process alive (see baileys-workarounds.ts):
   * - rc14's prekey upload races a 30 s `Pre-key upload timeout` timer and never clears it;
   * - `end()` removes the WebSocket 'close' listeners before closing, so a query in flight keeps its
   *   `delayCancellable` timeout (defaultQueryTimeoutMs) until it fires.
   * `source` matches the callback's source text, `stack` the stack where the timer was created.
   */
  leakedTimers: [
    { source: 'Pre-key upload timeout', stack: undefined },
    { source: undefined, stack: 'delayCancellable' },
  ] as ReadonlyArray<{ source: string | undefined; stack: string | undefined }>,

  /** The stanza (or bare close) that makes Baileys report `code`. */
  closeStanza(code: CloseCode, kind: CloseKind): BinaryNode | undefined {
    if (kind === 'socket') return undefined;
    if (kind === 'failure') return { tag: 'failure', attrs: { reason: String(code), location: 'emulator' } };
    switch (code) {
      case 401:
        return { tag: 'stream:error', attrs: { code: '401' }, content: [{ tag: 'conflict', attrs: { type: 'device_removed' } }] };
      case 440:
        // no code attribute: Baileys maps the <conflict> child to 440 (connectionReplaced)
        return { tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] };
      case 500:
        // an unknown reason with no code is Baileys' badSession default
        return { tag: 'stream:error', attrs: {}, content: [{ tag: 'xml-not-well-formed', attrs: {} }] };
      default:
        return { tag: 'stream:error', attrs: { code: String(code) } };
    }
  },

  /**
   * The stanza the server ends a companion's stream with, per forced logout (whatsmeow's and WhatsApp Web's readings of
   * them: `<failure reason>` 406 is BANNED, 403 LOCKED, 402 a temporary ban with its ban `code` and `expire` seconds).
   * `key_error` is a stream error whose reason is `<bad-mac/>`, which Baileys reads as 500 with that reason.
   */
  logoutStanza(reason: LogoutReason): BinaryNode {
    switch (reason) {
      case 'unlinked':
        return this.closeStanza(401, 'stream-error')!;
      case 'replaced':
        return this.closeStanza(440, 'stream-error')!;
      case 'banned':
        return { tag: 'failure', attrs: { reason: '406', location: 'emulator' } };
      case 'temporarily_banned':
        return { tag: 'failure', attrs: { reason: '402', code: '101', expire: '86400', location: 'emulator' } };
      case 'locked':
        return { tag: 'failure', attrs: { reason: '403', location: 'emulator' } };
      case 'key_error':
        return { tag: 'stream:error', attrs: {}, content: [{ tag: 'bad-mac', attrs: {} }] };
    }
  },

  /** Which kind of close a code defaults to: 403 is an account ban (`<failure>`), the rest are stream errors. */
  defaultCloseKind(code: CloseCode): CloseKind {
    if (code === 403) return 'failure';
    if (code === 428) return 'socket';
    return 'stream-error';
  },
} as const;

export type Profile = typeof profile;
