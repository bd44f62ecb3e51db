import type pg from "pg";
import type { Env } from "../config.ts";
import { retryingOnce } from "../lazy.ts";
import { type LogSigner, localLogSigner } from "./signer.ts";

/** The log signer the configuration names: a Cloud KMS key version, or the local database key. */
export function logSignerFromConfig(config: Env, pool: pg.Pool): LogSigner {
  const keyVersion = config.SVC_LOG_KMS_KEY_VERSION;
  if (!keyVersion) return localLogSigner(pool);
  // The KMS client (gRPC and its protos) loads at the first signature, not in every process.
  let started = false;
  const load = retryingOnce(async () => {
    const { kmsClient } = await import("../ci/identity/kms.ts");
    const { kmsLogSigner } = await import("./kms.ts");
    return kmsLogSigner(kmsClient(config.SVC_LOG_KMS_ENDPOINT), keyVersion);
  });
  const signer = () => {
    started = true;
    return load();
  };
  return {
    publicKey: async () => (await signer()).publicKey(),
    sign: async (message) => (await signer()).sign(message),
    close: async () => {
      if (started) await (await load().catch(() => undefined))?.close?.();
    },
  };
}
