// Composition root: one HTTP server on loopback (WebSocket /ws/chat + control API /control/*), the HTTPS media host, the modules.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BinaryNode } from '@whiskeysockets/baileys';
import { Calls } from './calls.js';
import { Connection } from './connection.js';
import { EmulatorControl, handleControlRequest, type ControlRoute } from './control.js';
import { Groups } from './groups.js';
import { Hub } from './hub.js';
import { handleIq } from './iq-handlers.js';
import { defaultLog, type EmulatorLog } from './log.js';
import { login } from './login.js';
import { MediaStore } from './media-store.js';
import { Pictures } from './pictures.js';
import { AppState } from './app-state.js';
import type { HandshakeResult } from './noise.js';
import { Pairing } from './pairing.js';
import { Phones } from './phones.js';
import { createNoisePki, type NoisePki } from './pki.js';
import { Presence } from './presence.js';
import { profile } from './profile.js';
import { StanzaRecorder } from './recorder.js';
import { ConnectionStats } from './stats.js';
import { Registry } from './registry.js';
import { Router } from './routing.js';
import { MessageFaults } from './message-faults.js';
import { createTlsIdentity, type TlsIdentity } from './tls-cert.js';
import { createWsServer } from './ws.js';

export interface EmulatorOptions {
  /** port of the WebSocket + control server (default: any free port) */
  port?: number;
  /** port of the HTTPS media host (default: any free port) */
  mediaPort?: number;
  /** serve /control/* over HTTP (default true; loopback only) */
  controlApi?: boolean;
  log?: EmulatorLog;
  /** how many stanzas to keep (default 20 000) */
  recordLimit?: number;
  /**
   * How long a server→client iq (pair-success, pair-device) waits for the client's answer (default 10 s). A benchmark
   * pairing hundreds of clients on a loaded machine may need longer: their answers queue behind each other's key uploads.
   */
  queryTimeoutMs?: number;
  /**
   * Runs before normal handling of every stanza from a client; return true to swallow it
   * (e.g. to probe which queries Baileys needs answered).
   */
  intercept?: (node: BinaryNode, device: string | undefined) => boolean;
}

/** Env for a child process (the gateway daemon) that should talk to this emulator; see README.md. */
export interface DaemonEnv {
  NODE_OPTIONS: string;
  GATEWAY_TEST_WA_CA_FILE: string;
  GATEWAY_TEST_WA_URL: string;
  NODE_EXTRA_CA_CERTS: string;
}

export interface WaEmulator {
  /** `ws://127.0.0.1:<port>/ws/chat`, Baileys' `waWebSocketUrl` */
  wsUrl: string;
  /** `http://127.0.0.1:<port>`; routes under /control/ */
  controlUrl: string;
  /** `127.0.0.1:<port>` of the HTTPS media host */
  mediaHost: string;
  /** the Noise root key clients must trust (Baileys' WA_CERT_DETAILS.PUBLIC_KEY) */
  caPublicKey: Buffer;
  /** PEM of the media host's self-signed certificate */
  tlsCert: string;
  control: EmulatorControl;
  pki: NoisePki;
  /** Writes the CA key (hex) and the media certificate (PEM) into `dir`. */
  writeTrustFiles(dir: string): { caFile: string; tlsCertFile: string };
  /** Writes the trust files into `dir` and returns the env a daemon child process needs. */
  daemonEnv(dir: string, preloadPath?: string): DaemonEnv;
  close(): Promise<void>;
}

/** Absolute path of the compiled preload module next to this file. */
export const PRELOAD_PATH = fileURLToPath(new URL('./preload.js', import.meta.url));

export async function startEmulator(options: EmulatorOptions = {}): Promise<WaEmulator> {
  const log = options.log ?? defaultLog();
  const pki = createNoisePki();
  const tls: TlsIdentity = createTlsIdentity();
  const recorder = new StanzaRecorder(options.recordLimit);
  const registry = new Registry();
  const hub = new Hub(registry, recorder, log);
  const media = new MediaStore(tls);
  const groups = new Groups(hub);
  const pictures = new Pictures(hub, groups, media);
  const appState = new AppState(hub);
  const phones = new Phones(hub, groups);
  const presence = new Presence(hub, groups);
  const pairing = new Pairing(hub);
  const messageFaults = new MessageFaults(registry);
  const router = new Router(hub, groups, phones, messageFaults);
  const calls = new Calls(hub);
  hub.onActive = (device) => {
    phones.bootstrap(device).catch((error: unknown) => log('phone bootstrap failed', { device: device.jid, error: String(error) }));
  };
  const stats = new ConnectionStats();
  const control = new EmulatorControl({ hub, pairing, groups, phones, presence, media, stats, pictures, calls, appState, messageFaults, router });
  const connections = new Set<Connection>();

  const onNode = async (connection: Connection, node: BinaryNode): Promise<void> => {
    if (options.intercept?.(node, connection.device?.jid)) return;
    switch (node.tag) {
      case 'iq':
        return handleIq({ hub, pairing, groups, media, pictures, appState }, connection, node);
      case 'message':
        return router.handleMessage(connection, node);
      case 'receipt':
        if (connection.device) hub.confirm(connection.device, node);
        return router.handleReceipt(connection, node);
      case 'presence':
        return presence.handle(connection, node);
      case 'chatstate':
        return presence.handleChatState(connection, node);
      case 'ack':
        if (connection.device) hub.confirm(connection.device, node);
        return;
      case 'call':
        return calls.handle(connection, node);
      case 'ib':
        return;
      default:
        log('unhandled stanza', { tag: node.tag });
    }
  };

  const hooks = {
    log,
    queryTimeoutMs: options.queryTimeoutMs ?? 10_000,
    onHandshake(connection: Connection, { clientStatic, payload }: HandshakeResult) {
      if (payload.devicePairingData) pairing.register(connection, clientStatic, payload.devicePairingData);
      else login(hub, connection, clientStatic, payload);
    },
    onNode,
    onClose(connection: Connection) {
      if (connections.delete(connection)) stats.open -= 1;
      pairing.forget(connection);
      presence.forget(connection);
      const device = connection.device;
      if (device && hub.online.get(device.jid) === connection) {
        hub.online.delete(device.jid);
        hub.requeueUnconfirmed(device);
        const stillOnline = registry.companions(device.account).some((d) => hub.online.has(d.jid));
        if (!stillOnline && device.account.presence === 'available') presence.set(device.account, 'unavailable');
      }
    },
    record(direction: 'in' | 'out', connection: Connection, node: BinaryNode) {
      recorder.record(direction, connection.id, connection.device?.jid, node);
    },
  };

  const wss = createWsServer();
  const http: Server = createServer((req, res) => {
    if (options.controlApi === false || !req.url?.startsWith('/control/')) {
      res.statusCode = 404;
      res.end();
      return;
    }
    void handleControlRequest(control, extraRoutes, req, res);
  });
  http.on('upgrade', (req, socket, head) => {
    stats.attempted();
    wss.handleUpgrade(req, socket, head, (ws) => {
      connections.add(new Connection(ws, pki, hooks));
      stats.open += 1;
    });
  });
  http.listen(options.port ?? 0, '127.0.0.1');
  await once(http, 'listening');
  await media.start(options.mediaPort);

  const port = (http.address() as AddressInfo).port;
  const wsUrl = `ws://127.0.0.1:${port}/ws/chat`;
  const controlUrl = `http://127.0.0.1:${port}`;
  const caPublicKey = Buffer.from(pki.root.public);
  const info = () => ({ wsUrl, controlUrl, mediaHost: media.host, caPublicKeyHex: caPublicKey.toString('hex'), tlsCert: tls.cert, baileys: profile.baileysVersion });
  const extraRoutes: Record<string, ControlRoute> = { 'GET /control/info': info };

  let closed = false;
  const emulator: WaEmulator = {
    wsUrl,
    controlUrl,
    mediaHost: media.host,
    caPublicKey,
    tlsCert: tls.cert,
    control,
    pki,
    writeTrustFiles(dir) {
      mkdirSync(dir, { recursive: true });
      const caFile = join(dir, 'wa-emulator-ca.hex');
      const tlsCertFile = join(dir, 'wa-emulator-media.pem');
      writeFileSync(caFile, `${caPublicKey.toString('hex')}\n`);
      writeFileSync(tlsCertFile, tls.cert);
      return { caFile, tlsCertFile };
    },
    daemonEnv(dir, preloadPath = PRELOAD_PATH) {
      const { caFile, tlsCertFile } = emulator.writeTrustFiles(dir);
      return {
        NODE_OPTIONS: `--import ${pathToFileURL(preloadPath).href}`,
        GATEWAY_TEST_WA_CA_FILE: caFile,
        GATEWAY_TEST_WA_URL: wsUrl,
        NODE_EXTRA_CA_CERTS: tlsCertFile,
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const connection of connections) connection.terminate();
      connections.clear();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await media.close();
      registry.close();
      phones.removeAllListeners();
    },
  };
  return emulator;
}
