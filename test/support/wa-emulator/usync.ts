// usync answers (devices, lid, contact, status, disappearing_mode), echoing the jid form each user was asked by.
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import type { Registry } from './registry.js';

export function usyncResult(registry: Registry, usync: BinaryNode): BinaryNode {
  const queryNode = getBinaryNodeChild(usync, 'query');
  const protocols = Array.isArray(queryNode?.content) ? queryNode.content.map((p) => p.tag) : [];
  const users = getBinaryNodeChildren(getBinaryNodeChild(usync, 'list'), 'user');
  const list = users.map((user): BinaryNode => {
    const contactNode = getBinaryNodeChild(user, 'contact');
    const contactText = contactNode?.content instanceof Uint8Array ? Buffer.from(contactNode.content).toString() : typeof contactNode?.content === 'string' ? contactNode.content : undefined;
    const askedJid = user.attrs.jid ?? (contactText ? `${contactText.replace(/^\+/, '').replace(/\D/g, '')}@s.whatsapp.net` : '');
    const asked = jidDecode(askedJid);
    const account = askedJid ? registry.account(askedJid) : undefined;
    const isLid = asked?.server === 'lid';
    const content: BinaryNode[] = [];
    for (const protocol of protocols) {
      switch (protocol) {
        case 'devices':
          content.push({
            tag: 'devices',
            attrs: {},
            content: [
              {
                tag: 'device-list',
                attrs: {},
                content: (account ? registry.accountDevices(account) : []).map((d) => ({
                  tag: 'device',
                  attrs: { id: String(d.deviceId), ...(d.deviceId ? { 'key-index': String(d.deviceId) } : {}) },
                })),
              },
            ],
          });
          break;
        case 'lid':
          if (account && !isLid) content.push({ tag: 'lid', attrs: { val: account.lidJid } });
          break;
        case 'contact':
          content.push({ tag: 'contact', attrs: { type: account ? 'in' : 'out' } });
          break;
        case 'status':
          if (account) content.push({ tag: 'status', attrs: { t: '1700000000' }, content: Buffer.from(account.about) });
          break;
        case 'disappearing_mode':
          content.push({ tag: 'disappearing_mode', attrs: { duration: '0', t: '0' } });
          break;
        default:
          break;
      }
    }
    // echo the form that was asked for: a LID stays a LID, anything else becomes the PN user jid
    const jid = isLid || !account ? askedJid : account.pnJid;
    return { tag: 'user', attrs: { jid }, content };
  });
  return {
    tag: 'usync',
    attrs: { sid: usync.attrs.sid ?? '', index: '0', last: 'true', mode: usync.attrs.mode ?? 'query', context: usync.attrs.context ?? 'interactive' },
    content: [
      { tag: 'result', attrs: {}, content: protocols.map((tag) => ({ tag, attrs: {} })) },
      { tag: 'list', attrs: {}, content: list },
    ],
  };
}
