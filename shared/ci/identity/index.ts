import type pg from "pg";
import type { Clock } from "../../clock.ts";
import type { Env } from "../../config.ts";
import { kmsClient, kmsJobSigner } from "./kms.ts";
import { type JobSigner, localJobSigner } from "./signer.ts";

/** The job-token signer the configuration names: the local database key, or a Cloud KMS key. */
export function jobSignerFromConfig(config: Env, pool: pg.Pool, clock: Clock): JobSigner {
  if (config.SVC_JOB_SIGNER === "kms") {
    return kmsJobSigner({
      client: kmsClient(config.SVC_JOB_KMS_ENDPOINT),
      keyVersion: config.SVC_JOB_KMS_KEY_VERSION!,
      previousKeyVersions: config.SVC_JOB_KMS_PREVIOUS_KEY_VERSIONS,
    });
  }
  return localJobSigner(pool, clock);
}
