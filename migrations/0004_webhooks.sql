-- Up Migration

-- Every lease of an outbox row (a worker's, or a Cloud Tasks task's) takes the next lease_seq, and
-- an outcome is recorded only for the lease that is current: a worker whose lease expired (it
-- hung, or died) cannot overwrite what the worker that took the row over recorded. Unlike
-- `attempts`, it is never reset (resume resets attempts), so it also names Cloud Tasks tasks
-- uniquely: Cloud Tasks refuses a task name that was used recently.
ALTER TABLE webhook_outbox ADD COLUMN lease_seq bigint NOT NULL DEFAULT 0;

-- A new row is due at once whatever a deliverer's clock says: delivery compares rows with the
-- clock it was given (tests move it), never with the database's now().
ALTER TABLE webhook_outbox ALTER COLUMN next_attempt_at SET DEFAULT '-infinity';

-- The undelivered rows in event order: the order in which deliverers lease them.
CREATE INDEX webhook_outbox_pending ON webhook_outbox (id) WHERE delivered_at IS NULL;

-- The rows in flight (leased, or reserved for a task), by subscription: a deliverer skips a
-- subscription that has one, and this index holds only those few rows, however long the backlog.
CREATE INDEX webhook_outbox_in_flight ON webhook_outbox (subscription_id)
  WHERE delivered_at IS NULL AND leased_until IS NOT NULL;

-- A repo-scoped subscription belongs to the repo by id: deleting the repo deletes its
-- subscriptions (and their outbox rows), so a new repo that takes the old name later does not
-- inherit them and leak its events to people who may not read it.
ALTER TABLE subscriptions ADD COLUMN repo_id bigint REFERENCES repos (id) ON DELETE CASCADE;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_repo_id_with_repo CHECK ((repo IS NULL) = (repo_id IS NULL));
CREATE INDEX subscriptions_by_repo_id ON subscriptions (repo_id) WHERE repo_id IS NOT NULL;

-- Down Migration
DROP INDEX webhook_outbox_in_flight;
DROP INDEX subscriptions_by_repo_id;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_repo_id_with_repo;
ALTER TABLE subscriptions DROP COLUMN repo_id;
DROP INDEX webhook_outbox_pending;
ALTER TABLE webhook_outbox ALTER COLUMN next_attempt_at SET DEFAULT now();
ALTER TABLE webhook_outbox DROP COLUMN lease_seq;
