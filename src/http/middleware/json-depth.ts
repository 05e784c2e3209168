// The nesting bound of request bodies: a body nested deeper than MAX_JSON_DEPTH arrays and objects is refused (400
// JSON_TOO_DEEP) before it is parsed. (Deep nesting costs the parser, the validator and every walk of the value a
// frame per level: 60 MB of `[` blocked the event loop for seconds.)
import { GatewayError } from '../../errors.js';

export const MAX_JSON_DEPTH = 32;

export function tooDeep(): GatewayError {
  return new GatewayError('JSON_TOO_DEEP', `the request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
}

/** Throws JSON_TOO_DEEP when `text` (JSON, valid or not) opens more than MAX_JSON_DEPTH arrays and objects at once. */
export function checkJsonDepth(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) throw tooDeep();
    } else if (c === 0x7d || c === 0x5d) {
      depth -= 1;
    }
  }
}
