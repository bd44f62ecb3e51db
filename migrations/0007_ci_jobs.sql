-- Up Migration

-- CI jobs (SPEC "CI job"): one row per triggered run of a repo's checks, pinned to one sequence of
-- the branch under test. `queued` → `claimed` (a worker holds it, with a request token) → `passed`
-- or `failed`; the reaper puts a claimed job whose heartbeat went stale back to `queued`.
CREATE TABLE ci_jobs (
  id                    uuid PRIMARY KEY,
  repo_id               bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  branch_id             bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  -- The branch head the job tests, fixed when it is queued.
  sequence              bigint NOT NULL,
  status                text NOT NULL DEFAULT 'queued'
                          CHECK (status IN ('queued', 'claimed', 'passed', 'failed')),
  trigger_type          text NOT NULL
                          CHECK (trigger_type IN ('push', 'proposal', 'proposal_synchronized', 'manual', 'schedule')),
  trigger_branch        text COLLATE "C" NOT NULL,
  trigger_base_branch   text COLLATE "C",
  trigger_proposal_id   uuid,
  -- What queued it, so a delivery that arrives twice (webhooks are at least once) or a minute that
  -- two cron runners both see queues one job: `<event id>:<trigger type>`, `schedule:<repo>:<minute>`.
  -- NULL for manual runs, each of which is its own job.
  trigger_key           text UNIQUE,
  -- The checks whose `if:` holds for this job, in file order.
  checks                text[] NOT NULL,
  created_by            text NOT NULL,
  queued_at             timestamptz NOT NULL,
  created_at            timestamptz NOT NULL,
  -- Claims so far; a request token or job token of an earlier claim no longer counts.
  attempt               integer NOT NULL DEFAULT 0,
  claimed_at            timestamptz,
  claimed_by            text,
  last_heartbeat_at     timestamptz,
  -- SHA-256 of the current claim's request token; the token itself is never stored.
  request_token_sha256  bytea UNIQUE,
  completed_at          timestamptz,
  error                 text,
  CHECK ((status = 'claimed') = (request_token_sha256 IS NOT NULL)),
  CHECK ((trigger_type IN ('proposal', 'proposal_synchronized')) = (trigger_proposal_id IS NOT NULL))
);

-- The queue in claim order: the oldest queued job first.
CREATE INDEX ci_jobs_queue ON ci_jobs (queued_at, id) WHERE status = 'queued';
-- The reaper's scan: claimed jobs by heartbeat.
CREATE INDEX ci_jobs_claimed ON ci_jobs (last_heartbeat_at) WHERE status = 'claimed';
CREATE INDEX ci_jobs_by_repo ON ci_jobs (repo_id, created_at DESC);

-- The audit trail of job OIDC JWTs: one row per token issued. No foreign keys, so the record of
-- who could act as which job outlives the job and its repo.
CREATE TABLE ci_token_issuances (
  jti          uuid PRIMARY KEY,
  job_id       uuid NOT NULL,
  attempt      integer NOT NULL,
  repo_id      bigint NOT NULL,
  repo         text NOT NULL,
  branch       text NOT NULL,
  sequence     bigint NOT NULL,
  check_name   text,
  audience     text NOT NULL,
  subject      text NOT NULL,
  key_id       text NOT NULL,
  issued_at    timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX ci_token_issuances_by_job ON ci_token_issuances (job_id, issued_at);

-- The logs uploaded for a job's checks: one per (job, check); a later upload replaces the earlier.
CREATE TABLE ci_logs (
  job_id        uuid NOT NULL REFERENCES ci_jobs (id) ON DELETE CASCADE,
  check_name    text COLLATE "C" NOT NULL,
  object_key    text NOT NULL,
  content_type  text NOT NULL,
  bytes         bigint NOT NULL,
  uploaded_at   timestamptz NOT NULL,
  PRIMARY KEY (job_id, check_name)
);

-- Subscriptions that the server registers from its own configuration (the CI scheduler's global
-- subscription), one per name: registering again updates it instead of adding another. Their URL
-- comes from the operator, not from a user, so deliveries skip the private-address guard and the
-- creator's access check.
ALTER TABLE subscriptions ADD COLUMN system_name text UNIQUE;

-- The branch head when a proposal was opened: CI's proposal job tests it, so a commit's
-- proposal_synchronized job is due only for commits above it, however late the commit's event
-- reaches the scheduler. NULL for proposals opened before this column existed.
ALTER TABLE proposals ADD COLUMN opened_at_sequence bigint;

-- Down Migration
ALTER TABLE proposals DROP COLUMN opened_at_sequence;
ALTER TABLE subscriptions DROP COLUMN system_name;
DROP TABLE ci_logs, ci_token_issuances, ci_jobs;
