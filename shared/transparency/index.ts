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
    return rememberingSignatures(kmsLogSigner(kmsClient(config.SVC_LOG_KMS_ENDPOINT), keyVersion));
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

/** How many recent signatures a KMS-backed signer keeps: one per repo whose log is being read. */
const REMEMBERED_SIGNATURES = 1024;

/**
 * Keeps the latest signatures by message. Ed25519 is deterministic, so a remembered signature is
 * exactly what KMS would answer again: a checkpoint read many times between commits (every CLI
 * contact reads one) costs one KMS call, not one per read.
 */
function rememberingSignatures(signer: LogSigner): LogSigner {
  const signatures = new Map<string, Buffer>();
  return {
    ...signer,
    async sign(message) {
      const key = message.toString("base64");
      const known = signatures.get(key);
      if (known) return known;
      const signature = await signer.sign(message);
      signatures.set(key, signature);
      if (signatures.size > REMEMBERED_SIGNATURES) {
        const oldest = signatures.keys().next().value;
        if (oldest !== undefined) signatures.delete(oldest);
      }
      return signature;
    },
  };
}
