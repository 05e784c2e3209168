// Labels of a sandbox business account: save, delete, assign to chats; labels.update as the app-state sync reports them.
import { GatewayError } from '../../errors.js';
import type { ChatOps, LabelInfo } from '../types.js';
import { accountOf, type SandboxAccountState } from './accounts.js';
import type { SandboxNetwork } from './network.js';
import type { SandboxSession } from './session.js';

export type LabelOpName = 'saveLabel' | 'deleteLabel' | 'setChatLabel';

/** The label operations of one account; only business accounts have labels. */
export class SandboxLabels implements Pick<ChatOps, LabelOpName> {
  constructor(
    private readonly network: SandboxNetwork,
    private readonly me: string,
    private readonly session: SandboxSession,
  ) {}

  async saveLabel(label: LabelInfo): Promise<void> {
    this.account().labels.set(label.id, { ...label });
    this.session.deliver('labels.update', { action: 'saved', label: { ...label } });
  }

  async deleteLabel(labelId: string): Promise<void> {
    const account = this.account();
    const label = this.label(account, labelId);
    account.labels.delete(labelId);
    account.labelChats.delete(labelId);
    this.session.deliver('labels.update', { action: 'deleted', label: { ...label } });
  }

  async setChatLabel(chatId: string, labelId: string, assigned: boolean): Promise<void> {
    const account = this.account();
    this.label(account, labelId);
    let chats = account.labelChats.get(labelId);
    if (!chats) account.labelChats.set(labelId, (chats = new Set()));
    if (chats.has(chatId) === assigned) return;
    if (assigned) chats.add(chatId);
    else chats.delete(chatId);
    this.session.deliver('labels.update', { action: assigned ? 'assigned' : 'unassigned', labelId, chatId });
  }

  private account(): SandboxAccountState {
    const account = accountOf(this.network, this.me);
    if (!account.business) throw new GatewayError('NOT_BUSINESS_ACCOUNT', 'labels are only available to business accounts');
    return account;
  }

  private label(account: SandboxAccountState, labelId: string): LabelInfo {
    const label = account.labels.get(labelId);
    if (!label) throw new GatewayError('LABEL_NOT_FOUND', `label ${labelId} not found`);
    return label;
  }
}
