// Checks base64 text in one linear pass. (The regular expressions this replaces backtracked quadratically on long runs
// of newlines: a few hundred KB of "\n" froze the event loop for seconds.)

export interface Base64Check {
  /** accept `+/` and `-_` in the same text (pictures do); otherwise one alphabet per text */
  mixedAlphabets: boolean;
}

const WHITESPACE = /\s/;

/**
 * True when `payload` is base64: letters, digits, `+/` (standard) or `-_` (URL-safe), line breaks anywhere in the body,
 * at most two `=` of padding, then only whitespace.
 */
export function isBase64Text(payload: string, check: Base64Check): boolean {
  let standard = false;
  let urlSafe = false;
  let padding = 0;
  let phase: 'body' | 'padding' | 'tail' = 'body';
  for (let i = 0; i < payload.length; i += 1) {
    const c = payload.charCodeAt(i);
    if (phase === 'body') {
      if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 10 || c === 13) continue;
      if (c === 43 || c === 47) {
        standard = true;
        continue;
      }
      if (c === 45 || c === 95) {
        urlSafe = true;
        continue;
      }
      phase = 'padding';
    }
    if (phase === 'padding') {
      if (c === 61 && padding < 2) {
        padding += 1;
        continue;
      }
      phase = 'tail';
    }
    if (!WHITESPACE.test(payload[i]!)) return false;
  }
  return check.mixedAlphabets || !(standard && urlSafe);
}
