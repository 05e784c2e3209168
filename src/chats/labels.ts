// Label operations of SPEC §4 "Labels" (business accounts only): list, create, update, delete, assign to chats.
import { GatewayError, notFound } from '../errors.js';
import type { EngineSession } from '../engine/types.js';
import type { SessionManager } from '../sessions/manager.js';
import type { LabelRow, LabelsRepo } from '../store/labels.js';
import { chatJid } from './ids.js';

export type LabelView = LabelRow;

export class LabelsService {
  constructor(private readonly deps: { sessions: SessionManager; labels: LabelsRepo }) {}

  async list(session: string, limit: number, offset: number): Promise<{ items: LabelView[]; total: number }> {
    await this.business(session);
    const [items, total] = await Promise.all([this.deps.labels.list(session, limit, offset), this.deps.labels.count(session)]);
    return { items, total };
  }

  /** The network lets the client number its labels: the next free number. */
  async create(session: string, input: { name: string; color: number }): Promise<LabelView> {
    const engine = await this.engine(session);
    const label = { id: await this.deps.labels.nextId(session), name: input.name, color: input.color };
    await engine.saveLabel(label);
    this.deps.labels.put(session, label);
    return label;
  }

  async update(session: string, labelId: string, patch: { name?: string; color?: number }): Promise<LabelView> {
    const engine = await this.engine(session);
    const label = { ...(await this.label(session, labelId)), ...patch };
    await engine.saveLabel(label);
    this.deps.labels.put(session, label);
    return label;
  }

  async delete(session: string, labelId: string): Promise<void> {
    const engine = await this.engine(session);
    await this.label(session, labelId);
    await engine.deleteLabel(labelId);
    await this.deps.labels.remove(session, labelId);
  }

  /** Assigns (or removes) the label on each chat; returns every chat that has the label afterwards. */
  async setChats(session: string, labelId: string, chatIds: string[], assigned: boolean): Promise<{ labelId: string; chatIds: string[] }> {
    const engine = await this.engine(session);
    await this.label(session, labelId);
    const jids = [...new Set(chatIds.map((c, i) => chatJid(c, `/chatIds/${i}`)))];
    for (const jid of jids) {
      await engine.setChatLabel(jid, labelId, assigned);
      if (assigned) await this.deps.labels.assign(session, labelId, jid);
      else await this.deps.labels.unassign(session, labelId, jid);
    }
    return { labelId, chatIds: await this.deps.labels.chats(session, labelId) };
  }

  async chats(session: string, labelId: string): Promise<string[]> {
    await this.business(session);
    await this.label(session, labelId);
    return this.deps.labels.chats(session, labelId);
  }

  // ---- internals ----

  private async engine(session: string): Promise<EngineSession> {
    await this.business(session);
    return await this.deps.sessions.connected(session);
  }

  private async business(session: string): Promise<void> {
    const row = await this.deps.sessions.get(session);
    if (row.platform === null) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${session} has not been paired, so whether it is a business account is not known`);
    if (row.platform !== 'smba') throw new GatewayError('NOT_BUSINESS_ACCOUNT', `session ${session} is not a business account; labels are only for business accounts`);
  }

  private async label(session: string, labelId: string): Promise<LabelRow> {
    const label = await this.deps.labels.get(session, labelId);
    if (!label) throw notFound('LABEL_NOT_FOUND', `label ${labelId}`);
    return label;
  }
}
