// Label operations of SPEC §4 "Labels" (business accounts only): list, create, update, delete, assign to chats.
import { GatewayError, notFound } from '../errors.js';
import type { EngineSession } from '../engine/types.js';
import type { SessionManager } from '../sessions/manager.js';
import type { LabelRow, LabelsRepo } from '../store/labels.js';
import { chatJid } from './ids.js';

export type LabelView = LabelRow;

export class LabelsService {
  constructor(private readonly deps: { sessions: SessionManager; labels: LabelsRepo }) {}

  list(session: string, limit: number, offset: number): { items: LabelView[]; total: number } {
    this.business(session);
    return { items: this.deps.labels.list(session, limit, offset), total: this.deps.labels.count(session) };
  }

  /** The network lets the client number its labels: the next free number. */
  async create(session: string, input: { name: string; color: number }): Promise<LabelView> {
    const engine = this.engine(session);
    const label = { id: this.deps.labels.nextId(session), name: input.name, color: input.color };
    await engine.saveLabel(label);
    this.deps.labels.put(session, label);
    return label;
  }

  async update(session: string, labelId: string, patch: { name?: string; color?: number }): Promise<LabelView> {
    const engine = this.engine(session);
    const label = { ...this.label(session, labelId), ...patch };
    await engine.saveLabel(label);
    this.deps.labels.put(session, label);
    return label;
  }

  async delete(session: string, labelId: string): Promise<void> {
    const engine = this.engine(session);
    this.label(session, labelId);
    await engine.deleteLabel(labelId);
    this.deps.labels.remove(session, labelId);
  }

  /** Assigns (or removes) the label on each chat; returns every chat that has the label afterwards. */
  async setChats(session: string, labelId: string, chatIds: string[], assigned: boolean): Promise<{ labelId: string; chatIds: string[] }> {
    const engine = this.engine(session);
    this.label(session, labelId);
    const jids = [...new Set(chatIds.map((c, i) => chatJid(c, `/chatIds/${i}`)))];
    for (const jid of jids) {
      await engine.setChatLabel(jid, labelId, assigned);
      if (assigned) this.deps.labels.assign(session, labelId, jid);
      else this.deps.labels.unassign(session, labelId, jid);
    }
    return { labelId, chatIds: this.deps.labels.chats(session, labelId) };
  }

  chats(session: string, labelId: string): string[] {
    this.business(session);
    this.label(session, labelId);
    return this.deps.labels.chats(session, labelId);
  }

  // ---- internals ----

  private engine(session: string): EngineSession {
    this.business(session);
    return this.deps.sessions.connected(session);
  }

  private business(session: string): void {
    const row = this.deps.sessions.get(session);
    if (row.platform === null) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${session} has not been paired, so whether it is a business account is not known`);
    if (row.platform !== 'smba') throw new GatewayError('NOT_BUSINESS_ACCOUNT', `session ${session} is not a business account; labels are only for business accounts`);
  }

  private label(session: string, labelId: string): LabelRow {
    const label = this.deps.labels.get(session, labelId);
    if (!label) throw notFound('LABEL_NOT_FOUND', `label ${labelId}`);
    return label;
  }
}
