// File names come from senders (a received document) or callers (a sent one's filename) and end up in
// Content-Disposition and on the recipient's screen: a right-to-left override there makes "invoice\u202Efdp.exe" read
// as "invoiceexe.pdf". Control and bidirectional-text characters are replaced before a name is stored or sent.
import { replaceControlCharacters } from '../control-characters.js';

/** The name with each control or bidi character replaced by `_`; undefined when nothing else is left. */
export function safeFileName(name: string | null | undefined): string | undefined {
  if (name === null || name === undefined) return undefined;
  const safe = replaceControlCharacters(name, '_').trim();
  return safe.replace(/_/g, '') === '' ? undefined : safe;
}
