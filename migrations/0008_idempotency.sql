-- Up Migration

-- Safe retries (docs/api.md "Safe retries"): one row per `Idempotency-Key` a caller sent with a
-- mutation, kept 24 hours. The row is taken (`in_progress`, with a fresh `lease`) in its own short
-- transaction before the work; the work's own transaction marks it `applied` just before its
-- COMMIT (shared/idempotency/scope.ts, called from withTx), so a done mutation is never forgotten;
-- the answer is stored after (`complete`) and replayed to every retry with the same key.
CREATE TABLE idempotency_keys (
  -- The authenticated principal: an email, `ci-job:<id>#<attempt>`, `ci-request:<id>#<attempt>`,
  -- `ci-worker:<worker>`. Keys of two principals never meet.
  identity          text COLLATE "C" NOT NULL,
  key               text COLLATE "C" NOT NULL,
  -- What the key was first used for: a retry must send the same method, path and body bytes.
  method            text NOT NULL,
  path              text COLLATE "C" NOT NULL,
  body_sha256       bytea NOT NULL,
  state             text NOT NULL CHECK (state IN ('in_progress', 'applied', 'complete')),
  -- Which attempt holds the key: a request that retakes a stale `in_progress` row gets a new one,
  -- and the earlier attempt's transaction then fails its mark and rolls back.
  lease             uuid NOT NULL,
  -- The answer to replay (headers without x-request-id; the body as the JSON text sent).
  status            integer,
  response_headers  jsonb,
  response_body     text,
  -- When the attempt holding the key started: the key expires 24 hours after.
  created_at        timestamptz NOT NULL,
  PRIMARY KEY (identity, key),
  CHECK ((state = 'complete') = (status IS NOT NULL))
);

-- The sweep deletes expired rows oldest first.
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- Down Migration
DROP TABLE idempotency_keys;
