// Webhooks and their outbox of deliveries (one row per event and matching webhook).
export default `
CREATE TABLE webhooks (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  url                   TEXT NOT NULL,
  events                TEXT NOT NULL DEFAULT '[]',
  session               TEXT,
  enabled               INTEGER NOT NULL DEFAULT 1,
  headers               TEXT NOT NULL DEFAULT '[]',
  retry_attempts        INTEGER NOT NULL,
  retry_delay_seconds   INTEGER NOT NULL,
  retry_policy          TEXT NOT NULL,
  hmac_key              TEXT NOT NULL,
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL
);

CREATE TABLE deliveries (
  id                TEXT PRIMARY KEY,
  webhook_id        INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id          TEXT NOT NULL,
  event             TEXT NOT NULL,
  session           TEXT NOT NULL,
  body              TEXT NOT NULL,
  status            TEXT NOT NULL DEFAULT 'pending',
  attempts          INTEGER NOT NULL DEFAULT 0,
  budget_start      INTEGER NOT NULL DEFAULT 0,
  next_attempt_at   INTEGER,
  last_status_code  INTEGER,
  last_error        TEXT,
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, status);
CREATE INDEX deliveries_succeeded ON deliveries (updated_at) WHERE status = 'succeeded';
`;
