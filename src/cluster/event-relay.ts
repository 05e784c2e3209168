// Every node's events on every node's live stream, and the changes other nodes must hear of (store.kind: postgres): a
// node publishes with NOTIFY inside the transaction that records the change, so the others hear of it once it is
// committed, and never of one rolled back. The live stream (SSE) is live only, as on one daemon; webhooks do not ride on
// this, they have the shared outbox. A NOTIFY carries at most 8,000 bytes, so a larger message goes as parts of that one
// transaction, which PostgreSQL delivers together and in order; the parts are joined on arrival.
import { randomUUID } from 'node:crypto';

/** UTF-16 units per part: at most 3 UTF-8 bytes each, so a part and its header stay under NOTIFY's 8,000 bytes */
const PART_UNITS = 2400;

/** What nodes tell each other: an event, or that something they cache changed (`topic`, e.g. the API keys). */
export type RelayMessage = { kind: 'event'; event: unknown } | { kind: 'changed'; topic: string; ids?: string[] };

/** Splits a text into parts of at most PART_UNITS units, never between the two halves of a surrogate pair. */
export function splitText(text: string, units = PART_UNITS): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + units);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts.length ? parts : [''];
}

/** The NOTIFY payloads of one message from `nodeId`, in order: `node id index count` then a newline and the part. */
export function encodeMessage(nodeId: string, message: RelayMessage): string[] {
  const parts = splitText(JSON.stringify(message));
  const id = randomUUID();
  return parts.map((part, i) => `${nodeId} ${id} ${i} ${parts.length}\n${part}`);
}

/** Joins the payloads heard into messages from the other nodes (a node's own come back too, and are dropped). */
export function createAssembler(nodeId: string, onMessage: (message: RelayMessage) => void): (payload: string) => void {
  if (!/^\S+$/.test(nodeId)) throw new Error(`a node id has no white space: ${JSON.stringify(nodeId)}`);
  /** parts received so far of messages not yet whole, by sender and message */
  const partial = new Map<string, string[]>();
  return (payload) => {
    const newline = payload.indexOf('\n');
    const [node, id, index, count] = payload.slice(0, newline).split(' ');
    if (node === nodeId || !id) return;
    const key = `${node} ${id}`;
    const parts = partial.get(key) ?? [];
    parts[Number(index)] = payload.slice(newline + 1);
    if (parts.filter((part) => part !== undefined).length < Number(count)) {
      partial.set(key, parts);
      return;
    }
    partial.delete(key);
    onMessage(JSON.parse(parts.join('')) as RelayMessage);
  };
}
