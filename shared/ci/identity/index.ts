import type pg from "pg";
import type { Clock } from "../../clock.ts";
import { type Env, requiredSetting } from "../../config.ts";
import { retryingOnce } from "../../lazy.ts";
import { type JobSigner, localJobSigner } from "./signer.ts";

/** The job-token signer the configuration names: the local database key, or a Cloud KMS key. */
export function jobSignerFromConfig(config: Env, pool: pg.Pool, clock: Clock): JobSigner {
  if (config.SVC_JOB_SIGNER === "kms") {
    // The KMS client (gRPC and its protos, some 40 MiB) loads when the first token is signed or
    // the JWKS first asked for, not in every process that never does either.
    return lazyJobSigner(async () => {
      const { kmsClient, kmsJobSigner } = await import("./kms.ts");
      return kmsJobSigner({
        client: kmsClient(config.SVC_JOB_KMS_ENDPOINT),
        keyVersion: requiredSetting(config, "SVC_JOB_KMS_KEY_VERSION"),
        previousKeyVersions: config.SVC_JOB_KMS_PREVIOUS_KEY_VERSIONS,
      });
    });
  }
  return localJobSigner(pool, clock);
}

/** A signer built on its first use; a failed build is tried again on the next call. */
function lazyJobSigner(build: () => Promise<JobSigner>): JobSigner {
  let started = false;
  const load = retryingOnce(build);
  const signer = () => {
    started = true;
    return load();
  };
  return {
    keyId: async () => (await signer()).keyId(),
    sign: async (input) => (await signer()).sign(input),
    publicJwks: async () => (await signer()).publicJwks(),
    // Closing a signer never used must not build one (and open a client) just to close it.
    close: async () => {
      if (started) await (await load().catch(() => undefined))?.close?.();
    },
  };
}
