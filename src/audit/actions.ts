// The admin actions the audit log records, and who can perform one.

export const AUDIT_ACTIONS = [
  'session.create',
  'session.update',
  'session.start',
  'session.stop',
  'session.restart',
  'session.logout',
  'session.delete',
  'session.pairing_code',
  'session.move',
  'key.create',
  'key.revoke',
  'key.update',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
  'webhook.delivery_retry',
  'client_rules.set',
  'client_rules.delete',
  'client_token.mint',
  'settings.update',
  'backup.create',
  'backup.restore',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** master key, an API key, a client token, or the daemon itself (scheduled work) */
export const ACTOR_KINDS = ['master', 'key', 'client', 'system'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

/** Who acted: for a key its id and name (as it was named then), for a client token its token id and ephemeral id. */
export interface AuditActor {
  kind: ActorKind;
  id?: string;
  name?: string;
}
