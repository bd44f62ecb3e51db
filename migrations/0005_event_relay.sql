-- Up Migration

-- Where the Pub/Sub relay has got to in the event log, shared by every instance so a relay that
-- restarts (or another instance that takes over) continues exactly where the last one stopped.
-- One row per relay; the cursor is the SSE cursor `<txid>.<position>`.
CREATE TABLE event_relay_cursors (
  relay       text PRIMARY KEY,
  cursor      text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE event_relay_cursors;
