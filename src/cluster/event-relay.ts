// Events of every node on every node's live stream (store.kind: postgres): each node publishes the events it records with
// NOTIFY and listens for the others'. The live stream (SSE) is live only, as on one daemon; webhooks do not ride on this,
// they have the shared outbox. A NOTIFY carries at most 8,000 bytes, so a larger event goes as parts sent in one
// transaction, which PostgreSQL delivers together and in order; the parts are joined on arrival.
import { randomUUID } from 'node:crypto';
import type { PgSql } from '../store/postgres.js';

const CHANNEL = 'gateway_events';
/** UTF-16 units per part: at most 3 UTF-8 bytes each, so a part and its header stay under NOTIFY's 8,000 bytes */
const PART_UNITS = 2400;

export interface EventRelay {
  /** sends an event (any JSON value) to the other nodes; settles once PostgreSQL has taken it */
  publish(event: unknown): Promise<void>;
  close(): Promise<void>;
}

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

/** Listens for the other nodes' events (`onEvent`) and publishes this node's; `nodeId` tells its own apart. */
export async function startEventRelay(sql: PgSql, nodeId: string, onEvent: (event: unknown) => void): Promise<EventRelay> {
  if (!/^\S+$/.test(nodeId)) throw new Error(`a node id has no white space: ${JSON.stringify(nodeId)}`);
  /** parts received so far of events not yet whole, by sender and event */
  const partial = new Map<string, string[]>();
  const listening = await sql.listen(CHANNEL, (payload) => {
    const newline = payload.indexOf('\n');
    const [node, id, index, count] = payload.slice(0, newline).split(' ');
    if (node === nodeId || !id) return;
    const key = `${node} ${id}`;
    const total = Number(count);
    const parts = partial.get(key) ?? [];
    parts[Number(index)] = payload.slice(newline + 1);
    if (parts.filter((part) => part !== undefined).length < total) {
      partial.set(key, parts);
      return;
    }
    partial.delete(key);
    onEvent(JSON.parse(parts.join('')));
  });
  return {
    async publish(event) {
      const parts = splitText(JSON.stringify(event));
      const id = randomUUID();
      const notices = parts.map((part, i) => `${nodeId} ${id} ${i} ${parts.length}\n${part}`);
      if (notices.length === 1) await sql`SELECT pg_notify(${CHANNEL}, ${notices[0]!})`;
      else await sql.begin((tx) => notices.map((notice) => tx`SELECT pg_notify(${CHANNEL}, ${notice})`));
    },
    close: () => listening.unlisten(),
  };
}
