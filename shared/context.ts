import type pg from "pg";
import { type Authenticator, createAuthenticator } from "./auth/authenticate.ts";
import { createIdTokenVerifier } from "./auth/idtoken.ts";
import { internalVerifierFromConfig } from "./auth/internal.ts";
import { createJobTokenVerifier } from "./auth/jobtoken.ts";
import { localBlobStore } from "./blobs/local.ts";
import { type BlobStore, madeOnFirstUse } from "./blobs/store.ts";
import { jobSignerFromConfig } from "./ci/identity/index.ts";
import type { JobSigner } from "./ci/identity/signer.ts";
import { type WorkerVerifier, workerVerifierFromConfig } from "./ci/worker/index.ts";
import { type Clock, systemClock } from "./clock.ts";
import { CommitGroups } from "./commits/groups.ts";
import { createReadCache, type ReadCache } from "./commits/read-cache.ts";
import { devIdentities, type Env, globalAdminsOf, requiredSetting } from "./config.ts";
import { createPool } from "./db/pool.ts";
import type { DatabaseTarget } from "./db/target.ts";
import { type EventHub, eventHubFromConfig } from "./events/index.ts";
import { type AccessTable, createAccessTable } from "./http/access.ts";
import type { Logger } from "./log.ts";
import { createPolicyEngine, type PolicyEngine } from "./policy/engine.ts";
import { logSignerFromConfig } from "./transparency/index.ts";
import type { LogSigner } from "./transparency/signer.ts";
import { createWebhookDelivery, type WebhookDelivery, type WebhookOptions } from "./webhooks/delivery.ts";

/** Everything an operation may use, built once per process from validated configuration. */
export interface AppContext {
  config: Env;
  log: Logger;
  pool: pg.Pool;
  blobs: BlobStore;
  auth: Authenticator;
  policies: PolicyEngine;
  /** SSE fan-out of this process (started by the server, or by the first stream). */
  events: EventHub;
  /** Where time-dependent decisions (webhook due rows, backoff, retention) get "now". */
  clock: Clock;
  /** Webhook delivery: URL vetting, and this process's deliverer (started by the server). */
  webhooks: WebhookDelivery;
  /** Groups this process's commits to one branch, one group at a time per repo (shared/commits/groups.ts). */
  commitGroups: CommitGroups;
  /** Signs CI job OIDC JWTs and publishes the JWKS: a local database key or Cloud KMS (docs/ci-identity.md). */
  jobSigner: JobSigner;
  /** Signs the repos' transparency-log checkpoints: a local Ed25519 key or Cloud KMS (docs/verifiable-history.md). */
  logSigner: LogSigner;
  /** Checks who claims a CI job: Kubernetes TokenReview, or a static token locally (docs/ci-worker-identity.md). */
  ciWorkers: WorkerVerifier;
  /** Where CI check logs are kept: a local directory or a GCS bucket (docs/ci-scheduler.md). */
  ciLogs: BlobStore;
  /**
   * This process's own base URL, the default of every public URL setting that is unset
   * (shared/ci/urls.ts). The server sets it once it listens, since PORT=0 picks the port then.
   */
  selfUrl: string;
  /**
   * How the dispatcher checks each kind of route access (shared/http/access.ts); the callers of
   * `internal` routes are proved by its verifier.
   */
  access: AccessTable;
  /** Answers of the read path that can never change, this process's own (shared/commits/read-cache.ts). */
  reads: ReadCache;
}

/** Seams for tests and benchmarks: a manual clock, webhook timeouts and resolution. */
export interface ContextOptions {
  clock?: Clock;
  webhooks?: WebhookOptions;
}

/** Who a request is: ID tokens of the configured issuer, CI job tokens, the global admins. */
export function authenticatorFromConfig(config: Env): Authenticator {
  const globalAdmins = new Set(globalAdminsOf(config));
  return createAuthenticator({
    verifier: createIdTokenVerifier({
      issuer: config.OIDC_ISSUER,
      // The CLI signs in with its own client (a desktop app's), so its ID tokens carry that id.
      audience:
        config.OIDC_CLIENT_ID &&
        [config.OIDC_CLIENT_ID, config.SVC_CLI_CLIENT_ID].filter((a) => a !== undefined),
    }),
    jobTokens: createJobTokenVerifier(),
    devIdentities: devIdentities(config),
    globalAdmins,
  });
}

/** The composition root: picks each adapter (local or cloud) from configuration. */
/** A bucket's store; the Cloud Storage library loads at its first use (blobs/store.ts). */
function gcsStore(bucket: string, emulatorUrl: string | undefined): BlobStore {
  return madeOnFirstUse(async () => {
    const { gcsBlobStore, storageClient } = await import("./blobs/gcs.ts");
    return gcsBlobStore(bucket, storageClient(emulatorUrl));
  });
}

export function createContext(
  config: Env,
  log: Logger,
  databaseUrl: DatabaseTarget,
  opts: ContextOptions = {},
): AppContext {
  const pool = createPool(databaseUrl);
  const clock = opts.clock ?? systemClock;
  return {
    config,
    log,
    pool,
    blobs:
      config.SVC_BLOB_STORE === "gcs"
        ? gcsStore(requiredSetting(config, "SVC_BLOB_BUCKET"), config.STORAGE_EMULATOR_HOST)
        : localBlobStore(config.SVC_BLOB_LOCAL_DIR),
    auth: authenticatorFromConfig(config),
    policies: createPolicyEngine(config.SVC_OPA_PATH ? { log, opaPath: config.SVC_OPA_PATH } : { log }),
    events: eventHubFromConfig(config, log, pool, databaseUrl, clock),
    clock,
    webhooks: createWebhookDelivery({ config, log, pool, clock, databaseUrl }, opts.webhooks),
    commitGroups: new CommitGroups(),
    jobSigner: jobSignerFromConfig(config, pool, clock),
    logSigner: logSignerFromConfig(config, pool),
    ciWorkers: workerVerifierFromConfig(config, log),
    ciLogs:
      config.SVC_CI_LOG_STORE === "gcs"
        ? gcsStore(requiredSetting(config, "SVC_CI_LOG_BUCKET"), config.STORAGE_EMULATOR_HOST)
        : localBlobStore(config.SVC_CI_LOG_DIR),
    selfUrl: `http://127.0.0.1:${config.PORT}`,
    access: createAccessTable({ verifyInternal: internalVerifierFromConfig(config) }),
    reads: createReadCache(),
  };
}
