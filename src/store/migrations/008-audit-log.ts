// The audit log of admin actions (who, what, when, request id, outcome); and an index that finds the oldest pending
// webhook delivery at once (the backlog-age metric), instead of scanning every pending row.
export default `
CREATE TABLE audit_log (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  at          INTEGER NOT NULL,
  actor_kind  TEXT NOT NULL,
  actor_id    TEXT,
  actor_name  TEXT,
  action      TEXT NOT NULL,
  target      TEXT,
  request_id  TEXT,
  outcome     TEXT NOT NULL,
  status      INTEGER,
  error_code  TEXT,
  details     TEXT
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_by_action ON audit_log (action, id);
CREATE INDEX audit_log_by_target ON audit_log (target, id);
CREATE INDEX audit_log_by_actor ON audit_log (actor_id, id);

CREATE INDEX deliveries_pending_age ON deliveries (created_at) WHERE status = 'pending';
`;
