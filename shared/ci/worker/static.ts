import { createHash, timingSafeEqual } from "node:crypto";
import { fail } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import { bearerToken, refuse, type WorkerIdentity, type WorkerVerifier } from "./verifier.ts";

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest();

/**
 * Local mode (SVC_CI_WORKER_TOKEN): a worker proves itself with one shared secret. Comparing
 * fixed-length SHA-256 digests with timingSafeEqual keeps both the content and the length of the
 * secret out of the response time. Every worker gets the same identity, `static-token`: the token
 * says nothing about which machine holds it.
 */
export function staticWorkerVerifier(token: string, log: Logger): WorkerVerifier {
  const expected = sha256(token);
  return {
    async verify(authorization): Promise<WorkerIdentity> {
      const given = bearerToken(authorization, log);
      if (!timingSafeEqual(sha256(given), expected)) refuse(log, "the token is not SVC_CI_WORKER_TOKEN");
      return { worker: "static-token" };
    },
  };
}

/**
 * Neither Kubernetes nor a static token is configured: no caller can prove it is a worker, so
 * every claim is refused. The message names the missing settings because it says nothing about
 * any credential, and the operator reading a worker's log needs it.
 */
export function unconfiguredWorkerVerifier(log: Logger): WorkerVerifier {
  const reason =
    "no worker identity is configured: neither SVC_CI_K8S_API_URL nor SVC_CI_WORKER_TOKEN is set";
  log.warn(reason + "; every claim will be refused");
  return {
    async verify(): Promise<WorkerIdentity> {
      log.warn({ reason }, "worker claim refused");
      fail("UNAUTHENTICATED", `claims are refused: ${reason}`);
    },
  };
}
