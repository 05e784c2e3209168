// An event for many webhooks is recorded once, with the webhooks it is for, in the transaction that records the event;
// its delivery rows are written from it afterwards, a bounded number at a time (webhooks/fanout.ts). A burst to 100
// webhooks once wrote 100 rows per event inside the event's own tick, and the daemon stopped answering while it did.
// webhook_ids: the webhooks whose rows are still to be written, comma-separated; targets: how many (the backlog counts them).
export default `
CREATE TABLE fanouts (
  id           INTEGER PRIMARY KEY,
  event_id     TEXT NOT NULL,
  event        TEXT NOT NULL,
  session      TEXT NOT NULL,
  timestamp    TEXT NOT NULL,
  payload      TEXT NOT NULL,
  webhook_ids  TEXT NOT NULL,
  targets      INTEGER NOT NULL,
  created_at   INTEGER NOT NULL
);
`;

/** The same schema on PostgreSQL (store.kind: postgres): times in ms are BIGINT, the id an identity. */
export const postgres = `
CREATE TABLE fanouts (
  id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id     TEXT NOT NULL,
  event        TEXT NOT NULL,
  session      TEXT NOT NULL,
  timestamp    TEXT NOT NULL,
  payload      TEXT NOT NULL,
  webhook_ids  TEXT NOT NULL,
  targets      INTEGER NOT NULL,
  created_at   BIGINT NOT NULL
);
`;
