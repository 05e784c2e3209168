// What a session knows of phone numbers and LIDs: fed by every event that names both, read when reporting people.
import { isLidUser, isPnUser, jidNormalizedUser } from '@whiskeysockets/baileys';
import { jidRef, type JidRef } from '../jid.js';

const MAX_ENTRIES = 200_000;

/** JID without device or agent; undefined for empty input. */
export function bare(jid: string | null | undefined): string | undefined {
  if (!jid) return undefined;
  const normalized = jidNormalizedUser(jid);
  return normalized || undefined;
}

/** The PN ↔ LID pairs a session has seen (Baileys keeps the same in its lid-mapping keys; this is the in-memory, synchronous view). */
export class Identities {
  private readonly lidByPn = new Map<string, string>();
  private readonly pnByLid = new Map<string, string>();

  /** Records that `a` and `b` name the same person (either order, either may be undefined). */
  remember(a: string | null | undefined, b: string | null | undefined): void {
    const x = bare(a);
    const y = bare(b);
    if (!x || !y) return;
    const pn = isPnUser(x) ? x : isPnUser(y) ? y : undefined;
    const lid = isLidUser(x) ? x : isLidUser(y) ? y : undefined;
    if (!pn || !lid) return;
    if (this.lidByPn.size >= MAX_ENTRIES) {
      this.lidByPn.clear();
      this.pnByLid.clear();
    }
    this.lidByPn.set(pn, lid);
    this.pnByLid.set(lid, pn);
  }

  pnOf(jid: string | null | undefined): string | undefined {
    const j = bare(jid);
    if (!j) return undefined;
    return isPnUser(j) ? j : this.pnByLid.get(j);
  }

  lidOf(jid: string | null | undefined): string | undefined {
    const j = bare(jid);
    if (!j) return undefined;
    return isLidUser(j) ? j : this.lidByPn.get(j);
  }

  /** The canonical id of a person: the phone JID when known, else the LID (or whatever JID was given). */
  canonical(jid: string | null | undefined, alt?: string | null): string | undefined {
    this.remember(jid, alt);
    return this.pnOf(jid) ?? this.pnOf(alt) ?? bare(jid) ?? bare(alt);
  }

  /** A JIDRef with both the phone number and the LID where known. */
  ref(jid: string | null | undefined, alt?: string | null): JidRef {
    const id = this.canonical(jid, alt) ?? '';
    const lid = this.lidOf(id) ?? this.lidOf(jid) ?? this.lidOf(alt);
    return jidRef(id, lid ? { lid } : {});
  }
}
