import type { Clock } from "../../clock.ts";
import type { Env } from "../../config.ts";
import { retryingOnce } from "../../lazy.ts";
import type { Logger } from "../../log.ts";
import { checkKubernetesServer } from "./k8s-settings.ts";
import { staticWorkerVerifier, unconfiguredWorkerVerifier } from "./static.ts";
import type { WorkerVerifier } from "./verifier.ts";

export type { WorkerIdentity, WorkerVerifier } from "./verifier.ts";
export { MAX_POD_AGE_MS } from "./verifier.ts";

/** Per-request limit on Kubernetes API calls; a claim waits at most four of these. */
const K8S_TIMEOUT_MS = 10_000;

/**
 * The worker check for `POST /claim` the configuration names:
 * - SVC_CI_K8S_API_URL set: TokenReview plus the pod's owner chain (the scheduler authenticates
 *   with SVC_CI_K8S_TOKEN, else a Google access token from Application Default Credentials);
 * - else SVC_CI_WORKER_TOKEN set: the local static token;
 * - else: every claim is refused.
 * Config validation already refuses both at once, so a static token can never weaken a cluster
 * setup. Throws at start-up when the Kubernetes URL or CA file cannot work.
 */
export function workerVerifierFromConfig(
  config: Env,
  log: Logger,
  deps: { clock?: Clock; timeoutMs?: number } = {},
): WorkerVerifier {
  if (config.SVC_CI_K8S_API_URL) {
    const server = config.SVC_CI_K8S_API_URL;
    checkKubernetesServer(server, config.SVC_CI_K8S_CA_FILE);
    // @kubernetes/client-node costs over 100 MiB of memory: every process (and every cloud
    // function) that never checks a claim is spared it.
    return lazyVerifier(async () => {
      const [{ googleAccessTokenSource, kubernetesApis }, { kubernetesWorkerVerifier }] = await Promise.all([
        import("./k8s-client.ts"),
        import("./kubernetes.ts"),
      ]);
      const apis = kubernetesApis({
        server,
        caFile: config.SVC_CI_K8S_CA_FILE,
        credential: config.SVC_CI_K8S_TOKEN
          ? { token: config.SVC_CI_K8S_TOKEN }
          : { tokenSource: googleAccessTokenSource() },
        timeoutMs: deps.timeoutMs ?? K8S_TIMEOUT_MS,
      });
      return kubernetesWorkerVerifier({
        apis,
        namespace: config.SVC_CI_K8S_NAMESPACE,
        audience: config.SVC_CI_K8S_AUDIENCE,
        log,
        ...(deps.clock ? { clock: deps.clock } : {}),
      });
    });
  }
  if (config.SVC_CI_WORKER_TOKEN) return staticWorkerVerifier(config.SVC_CI_WORKER_TOKEN, log);
  return unconfiguredWorkerVerifier(log);
}

/** A verifier built on its first use; a failed build is tried again on the next claim. */
function lazyVerifier(build: () => Promise<WorkerVerifier>): WorkerVerifier {
  const verifier = retryingOnce(build);
  return { verify: async (authorization) => (await verifier()).verify(authorization) };
}
