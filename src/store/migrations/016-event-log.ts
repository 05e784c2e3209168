// The event log (issue 30): every event a session emits, numbered per session without gaps, kept events.retentionDays so
// a reader that was away pages through what it missed (GET /api/events) or resumes its stream. `envelope` is the
// event exactly as streams and webhooks carry it. A webhook fan-out carries the number too.
export default `
CREATE TABLE event_log (
  session   TEXT NOT NULL,
  seq       INTEGER NOT NULL,
  event     TEXT NOT NULL,
  at        INTEGER NOT NULL,
  envelope  TEXT NOT NULL,
  PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE INDEX event_log_by_time ON event_log (at);
ALTER TABLE fanouts ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
`;

/** The same on PostgreSQL: times in ms are BIGINT. */
export const postgres = `
CREATE TABLE event_log (
  session   TEXT NOT NULL,
  seq       BIGINT NOT NULL,
  event     TEXT NOT NULL,
  at        BIGINT NOT NULL,
  envelope  TEXT NOT NULL,
  PRIMARY KEY (session, seq)
);
CREATE INDEX event_log_by_time ON event_log (at);
ALTER TABLE fanouts ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
`;
