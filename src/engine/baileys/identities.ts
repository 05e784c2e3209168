// What a session knows of phone numbers and LIDs: fed by every event that names both, read when reporting people.
import { isLidUser, isPnUser, jidNormalizedUser } from '@whiskeysockets/baileys';
import { IdentityPairs } from '../identities.js';
import { jidRef, type JidRef } from '../jid.js';
import type { IdentitySource } from '../types.js';

/** JID without device or agent; undefined for empty input. */
export function bare(jid: string | null | undefined): string | undefined {
  if (!jid) return undefined;
  const normalized = jidNormalizedUser(jid);
  return normalized || undefined;
}

/**
 * The PN ↔ LID pairs a session has seen: a synchronous view over IdentityPairs (kept in the gateway's store across
 * restarts). Baileys keeps its own in its lid-mapping keys, but only fills message keys' `*Alt` from the stanza.
 */
export class Identities {
  constructor(private readonly pairs: IdentityPairs = new IdentityPairs()) {}

  /** Records that `a` and `b` name the same person (either order, either may be undefined), as `source` told. */
  remember(a: string | null | undefined, b: string | null | undefined, source: IdentitySource = 'message'): void {
    const x = bare(a);
    const y = bare(b);
    if (!x || !y) return;
    const pn = isPnUser(x) ? x : isPnUser(y) ? y : undefined;
    const lid = isLidUser(x) ? x : isLidUser(y) ? y : undefined;
    if (!pn || !lid) return;
    this.pairs.set(pn, lid, source);
  }

  pnOf(jid: string | null | undefined): string | undefined {
    const j = bare(jid);
    if (!j) return undefined;
    return isPnUser(j) ? j : this.pairs.pnOf(j);
  }

  lidOf(jid: string | null | undefined): string | undefined {
    const j = bare(jid);
    if (!j) return undefined;
    return isLidUser(j) ? j : this.pairs.lidOf(j);
  }

  /** The canonical id of a person: the phone JID when known, else the LID (or whatever JID was given). */
  canonical(jid: string | null | undefined, alt?: string | null, source?: IdentitySource): string | undefined {
    this.remember(jid, alt, source);
    return this.pnOf(jid) ?? this.pnOf(alt) ?? bare(jid) ?? bare(alt);
  }

  /** A JIDRef with both the phone number and the LID where known. */
  ref(jid: string | null | undefined, alt?: string | null, source?: IdentitySource): JidRef {
    const id = this.canonical(jid, alt, source) ?? '';
    const lid = this.lidOf(id) ?? this.lidOf(jid) ?? this.lidOf(alt);
    return jidRef(id, lid ? { lid } : {});
  }
}
