-- Up Migration

-- The job-token (CI job OIDC JWT) signing keys of LOCAL mode (SVC_JOB_SIGNER=local). In the cloud
-- the key lives in Cloud KMS and this table stays empty. The private key is kept here, in the
-- database, only because local mode has nowhere better: see docs/ci-identity.md.
-- At most one key is active (retired_at IS NULL); instances that start at once race to insert it
-- with ON CONFLICT DO NOTHING and all read back the one that won. A retired key stays in the JWKS
-- until every token it signed has expired.
CREATE TABLE job_signing_keys (
  kid          text PRIMARY KEY,
  private_pem  text NOT NULL,
  public_jwk   jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  retired_at   timestamptz
);

CREATE UNIQUE INDEX job_signing_keys_one_active ON job_signing_keys ((true)) WHERE retired_at IS NULL;

-- Down Migration
DROP TABLE job_signing_keys;
