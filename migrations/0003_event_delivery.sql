-- Up Migration

-- Readers of the event log follow (txid, position) and read only events of transactions older
-- than their snapshot's xmin, all of which have ended: so no event can later appear behind a
-- reader's cursor, although positions are handed out in insert order, not commit order.
ALTER TABLE events ADD COLUMN txid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_in_commit_order ON events (txid, position);
DROP INDEX events_by_repo;
CREATE INDEX events_by_repo ON events (repo, txid, position);

-- Webhook subscriptions. repo NULL: every repo; event_types NULL: every type.
CREATE TABLE subscriptions (
  id             uuid PRIMARY KEY,
  repo           text COLLATE "C",
  event_types    text[],
  backend        text NOT NULL CHECK (backend IN ('webhook')),
  url            text NOT NULL,
  secret         text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  created_by     text COLLATE "C" NOT NULL,
  failure_count  integer NOT NULL DEFAULT 0,
  suspended_at   timestamptz
);
CREATE INDEX subscriptions_by_repo ON subscriptions (repo);
CREATE INDEX subscriptions_by_creator ON subscriptions (created_by);

-- The transactional outbox: one row per (event, matching subscription), written in the
-- mutation's transaction. A row is due when next_attempt_at has passed and it is not leased; a
-- worker leases it (leased_until) while it sends, so two workers never send the same attempt.
-- Rows of a suspended subscription stay, held, until it is resumed.
CREATE TABLE webhook_outbox (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subscription_id  uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  event_id         uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  leased_until     timestamptz,
  delivered_at     timestamptz,
  last_status      integer,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL;
CREATE INDEX webhook_outbox_by_subscription ON webhook_outbox (subscription_id) WHERE delivered_at IS NULL;
CREATE INDEX webhook_outbox_delivered ON webhook_outbox (delivered_at) WHERE delivered_at IS NOT NULL;

-- Down Migration
DROP TABLE webhook_outbox, subscriptions;
DROP INDEX events_by_repo;
CREATE INDEX events_by_repo ON events (repo, position);
DROP INDEX events_in_commit_order;
ALTER TABLE events DROP COLUMN txid;
