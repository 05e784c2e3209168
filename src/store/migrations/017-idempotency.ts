// Idempotent sends (issue 30): a request that sends, given an Idempotency-Key, is recorded before it runs and its answer
// once it has one, for 24 hours, so a retry with the same key gets the first answer instead of a second send, across
// restarts and nodes. scope: who asked (master, an API key, a client token's browser); fingerprint: what was asked.
// state: pending (running, in run `run_id`), done (answer kept), unknown (it failed after it may have sent).
export default `
CREATE TABLE idempotency_keys (
  scope        TEXT NOT NULL,
  key          TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  state        TEXT NOT NULL,
  run_id       TEXT NOT NULL,
  status       INTEGER,
  answer       TEXT,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_by_expiry ON idempotency_keys (expires_at);
`;

/** The same on PostgreSQL: times in ms are BIGINT. */
export const postgres = `
CREATE TABLE idempotency_keys (
  scope        TEXT NOT NULL,
  key          TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  state        TEXT NOT NULL,
  run_id       TEXT NOT NULL,
  status       INTEGER,
  answer       TEXT,
  created_at   BIGINT NOT NULL,
  expires_at   BIGINT NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_by_expiry ON idempotency_keys (expires_at);
`;
