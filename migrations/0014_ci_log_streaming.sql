-- Up Migration

-- Check logs streamed while a check runs (docs/ci-worker.md, "Logs"): the worker uploads the log
-- so far every few seconds (`?partial=true`), then the whole log once the check has ended.
-- `final` tells a reader whether more may come, and lets the server refuse a late partial upload
-- that would replace the whole log of the same attempt (`attempt`; a job re-queued by the reaper
-- streams its next attempt over the last one's log). Partial uploads are capped per check per minute: the count in
-- the current window (`partial_uploads`, since `partial_window_start`). Logs uploaded before this
-- column existed were all whole logs.
ALTER TABLE ci_logs
  ADD COLUMN final boolean NOT NULL DEFAULT true,
  ADD COLUMN attempt integer,
  ADD COLUMN partial_uploads integer NOT NULL DEFAULT 0,
  ADD COLUMN partial_window_start timestamptz;

-- Down Migration
ALTER TABLE ci_logs DROP COLUMN partial_window_start, DROP COLUMN partial_uploads, DROP COLUMN attempt,
  DROP COLUMN final;
