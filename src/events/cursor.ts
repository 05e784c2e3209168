// Where a reader of the event log stands: the last number it saw of each session. An event stream sends it as each
// event's `id:` and takes it back as `Last-Event-ID` (or `?after=`): a bare number for a stream of one session, else
// `session:number` pairs joined by commas (session names hold neither character).
export type Positions = Map<string, number>;

const PAIR = /^([a-zA-Z0-9][a-zA-Z0-9._-]{0,63}):(\d{1,15})$/;
/** what parseCursor takes, as a JSON Schema pattern (how many sessions, and a bare number's session, are checked there) */
const NAME_AND_NUMBER = '[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}:\\d{1,15}';
export const CURSOR_PATTERN = `^(?:\\s*\\d{1,15}\\s*|[\\s,]*${NAME_AND_NUMBER}(?:\\s*,[\\s,]*${NAME_AND_NUMBER})*[\\s,]*)$`;
/** sessions one cursor may name: a stream's own cursor names each session in its scope with events */
export const MAX_CURSOR_SESSIONS = 10_000;

/** The positions a cursor names, or a message saying what is wrong with it. */
export function parseCursor(text: string, session: string | undefined): Positions | string {
  const trimmed = text.trim();
  if (/^\d{1,15}$/.test(trimmed)) {
    if (!session) return 'a bare number names a position in one session: add session=, or give session:number pairs';
    return new Map([[session, Number(trimmed)]]);
  }
  const positions: Positions = new Map();
  const pairs = trimmed.split(',').map((pair) => pair.trim()).filter(Boolean);
  if (pairs.length === 0) return 'must be a number or session:number pairs joined by commas';
  if (pairs.length > MAX_CURSOR_SESSIONS) return `names more than ${MAX_CURSOR_SESSIONS} sessions`;
  for (const pair of pairs) {
    const match = PAIR.exec(pair);
    if (!match) return 'must be a number or session:number pairs joined by commas';
    positions.set(match[1]!, Number(match[2]));
  }
  if (session) return new Map([[session, positions.get(session) ?? 0]]);
  return positions;
}

/** The cursor of `positions`: the bare number for a stream of one session. */
export function formatCursor(positions: Positions, session: string | undefined): string {
  if (session) return String(positions.get(session) ?? 0);
  let text = '';
  for (const [name, seq] of positions) if (seq > 0) text += `${text ? ',' : ''}${name}:${seq}`;
  return text;
}
