// The `<enc>` node of a message stanza, as a phone builds it.
import type { BinaryNode, proto } from '@whiskeysockets/baileys';

const MEDIA_TYPES: Record<string, string> = {
  imageMessage: 'image',
  videoMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
  stickerMessage: 'sticker',
};

/** `count`: the retry receipt's count a re-sent copy answers (WhatsApp marks a re-send on its `enc`). */
export function encNode(type: string, ciphertext: Uint8Array, message?: proto.IMessage, count?: number): BinaryNode {
  const mediaKey = message ? Object.keys(MEDIA_TYPES).find((key) => (message as Record<string, unknown>)[key]) : undefined;
  return {
    tag: 'enc',
    attrs: { v: '2', type, ...(mediaKey ? { mediatype: MEDIA_TYPES[mediaKey]! } : {}), ...(count !== undefined ? { count: String(count) } : {}) },
    content: ciphertext,
  };
}
