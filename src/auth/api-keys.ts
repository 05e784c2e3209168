// API keys: creation (shown once), listing, revocation, and authentication of a bearer key.
import { randomUUID } from 'node:crypto';
import { notFound } from '../errors.js';
import type { KeysRepo, ApiKeyRow } from '../store/keys.js';
import type { Principal } from './scopes.js';
import { randomToken, sha256Hex } from './secrets.js';

export const API_KEY_PREFIX = 'svc_';

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  sessions: string[] | null;
  createdAt: string;
  lastUsedAt: string | null;
}

export const apiKeyView = (row: ApiKeyRow): ApiKeyView => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  scopes: row.scopes,
  sessions: row.sessions,
  createdAt: row.createdAt,
  lastUsedAt: row.lastUsedAt,
});

export class ApiKeys {
  /** last-used stamps are written at most once a minute per key, off the request's hot path */
  private readonly lastTouched = new Map<string, number>();
  /** principals by key hash, so a busy key costs one hash per request; dropped on revoke */
  private readonly principals = new Map<string, Principal>();

  constructor(private readonly repo: KeysRepo) {}

  create(input: { name: string; scopes: string[]; sessions?: string[] }): ApiKeyView & { key: string } {
    const key = `${API_KEY_PREFIX}${randomToken(24)}`;
    const row = {
      id: randomUUID(),
      name: input.name,
      hash: sha256Hex(key),
      prefix: key.slice(0, 10),
      scopes: [...new Set(input.scopes)],
      sessions: input.sessions ? [...new Set(input.sessions)] : null,
      createdAt: new Date().toISOString(),
    };
    this.repo.insert(row);
    return { ...apiKeyView({ ...row, lastUsedAt: null }), key };
  }

  list(): ApiKeyView[] {
    return this.repo.list().map(apiKeyView);
  }

  revoke(id: string): void {
    if (!this.repo.delete(id)) throw notFound('KEY_NOT_FOUND', `API key ${id}`);
    this.principals.clear();
  }

  /** The principal of a bearer key given by its SHA-256 digest, or undefined when no key matches. */
  authenticate(bearerDigest: Buffer): Principal | undefined {
    const hash = bearerDigest.toString('hex');
    let principal = this.principals.get(hash);
    if (!principal) {
      const row = this.repo.findByHash(hash);
      if (!row) return undefined;
      principal = { kind: 'key', id: row.id, name: row.name, scopes: new Set(row.scopes), sessions: row.sessions };
      if (this.principals.size >= 10_000) this.principals.clear();
      this.principals.set(hash, principal);
    }
    const id = (principal as { id: string }).id;
    const now = Date.now();
    if ((this.lastTouched.get(id) ?? 0) < now - 60_000) {
      this.lastTouched.set(id, now);
      this.repo.touch(id, new Date(now).toISOString());
    }
    return principal;
  }
}
