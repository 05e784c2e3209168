// Login of a paired companion: check its Noise key, replace an older connection (440), answer `<success>`.
import type { proto } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import { unixNow, type Hub } from './hub.js';
import { profile } from './profile.js';

export function login(hub: Hub, connection: Connection, clientStatic: Buffer, payload: proto.ClientPayload): void {
  const phone = String(payload.username ?? '');
  const device = phone ? hub.registry.device(`${phone}:${payload.device ?? 0}@s.whatsapp.net`) : undefined;
  if (!device || device.virtual || !device.noiseKey?.equals(clientStatic)) {
    hub.log('login refused: unknown device or wrong noise key', { phone, device: payload.device });
    connection.close({ tag: 'failure', attrs: { reason: '401', location: 'emulator' } });
    return;
  }
  const previous = hub.online.get(device.jid);
  if (previous && previous !== connection) previous.close(profile.closeStanza(440, 'stream-error'));
  connection.device = device;
  hub.online.set(device.jid, connection);
  if (payload.pushName) device.account.pushName = payload.pushName;
  const t = unixNow();
  connection.send({
    tag: 'success',
    attrs: { t, props: '1', abprops: '1', location: 'emulator', creation: t, lid: device.lid },
  });
  // queued stanzas and <ib><offline/> follow the client's passive/active iq (see iq-handlers.ts)
}
