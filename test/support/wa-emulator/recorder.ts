// Records every stanza the emulator receives and sends, so tests can assert on them and a Baileys upgrade can diff them.
import type { BinaryNode } from '@whiskeysockets/baileys';

/** A stanza with binary content replaced by its length, safe to JSON-encode. */
export interface NodeSummary {
  tag: string;
  attrs: Record<string, string>;
  content?: NodeSummary[] | string;
}

export interface StanzaRecord {
  seq: number;
  /** ms since the epoch */
  at: number;
  direction: 'in' | 'out';
  connectionId: number;
  /** the companion device (PN device jid) once logged in */
  device?: string;
  /** `tag xmlns=… type=… <firstChild>`: stable across runs, for diffing what Baileys sends */
  shape: string;
  node: NodeSummary;
}

export interface StanzaFilter {
  direction?: 'in' | 'out';
  device?: string;
  tag?: string;
  xmlns?: string;
  since?: number;
}

export function summarise(node: BinaryNode): NodeSummary {
  const out: NodeSummary = { tag: node.tag, attrs: { ...node.attrs } };
  if (Array.isArray(node.content)) out.content = node.content.map(summarise);
  else if (typeof node.content === 'string') out.content = node.content;
  else if (node.content instanceof Uint8Array) out.content = `<${node.content.length} bytes>`;
  return out;
}

export function shapeOf(node: BinaryNode): string {
  const first = Array.isArray(node.content) ? node.content[0] : undefined;
  const parts = [node.tag];
  if (node.attrs.xmlns) parts.push(`xmlns=${node.attrs.xmlns}`);
  if (node.attrs.type) parts.push(`type=${node.attrs.type}`);
  if (first) parts.push(`<${first.tag}>`);
  return parts.join(' ');
}

export class StanzaRecorder {
  private records: StanzaRecord[] = [];
  private seq = 0;

  constructor(private readonly limit = 20_000) {}

  record(direction: 'in' | 'out', connectionId: number, device: string | undefined, node: BinaryNode): void {
    this.records.push({
      seq: ++this.seq,
      at: Date.now(),
      direction,
      connectionId,
      ...(device ? { device } : {}),
      shape: shapeOf(node),
      node: summarise(node),
    });
    if (this.records.length > this.limit) this.records.splice(0, this.records.length - this.limit);
  }

  list(filter: StanzaFilter = {}): StanzaRecord[] {
    return this.records.filter(
      (r) =>
        (!filter.direction || r.direction === filter.direction) &&
        (!filter.device || r.device === filter.device) &&
        (!filter.tag || r.node.tag === filter.tag) &&
        (!filter.xmlns || r.node.attrs.xmlns === filter.xmlns) &&
        (filter.since === undefined || r.seq > filter.since),
    );
  }

  /** The distinct shapes seen, sorted: a compact fingerprint of what the client speaks. */
  shapes(direction: 'in' | 'out' = 'in'): string[] {
    return [...new Set(this.records.filter((r) => r.direction === direction).map((r) => r.shape))].sort();
  }

  get lastSeq(): number {
    return this.seq;
  }

  clear(): void {
    this.records = [];
  }
}
