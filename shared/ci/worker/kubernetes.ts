import type { V1ObjectMeta, V1OwnerReference } from "@kubernetes/client-node";
import { type Clock, systemClock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { classifyApiError, type KubernetesApis } from "./k8s-client.ts";
import {
  bearerToken,
  MAX_POD_AGE_MS,
  refuse,
  unavailable,
  WORKER_NAME,
  type WorkerIdentity,
  type WorkerVerifier,
} from "./verifier.ts";

// Projected service-account tokens carry the pod they are bound to; the API server returns it in
// the TokenReview's user.extra. Secret-based (legacy) tokens carry nothing and are refused.
const POD_NAME = "authentication.kubernetes.io/pod-name";
const POD_UID = "authentication.kubernetes.io/pod-uid";

export interface KubernetesVerifierOptions {
  apis: KubernetesApis;
  /** The CI namespace (SVC_CI_K8S_NAMESPACE). */
  namespace: string;
  /** The audience worker tokens are minted for (SVC_CI_K8S_AUDIENCE). */
  audience: string;
  log: Logger;
  clock?: Clock;
}

/**
 * Cloud mode: a worker sends its projected service-account token. The claim is accepted only
 * when, in this order (each step refuses with UNAUTHENTICATED and logs why):
 * 1. TokenReview authenticates the token for our audience as `system:serviceaccount:<ns>:ci-worker`;
 * 2. the token is bound to a pod (name and uid);
 * 3. that pod exists now with the same uid, runs as `ci-worker` and is younger than 4 hours;
 * 4. its controller is a batch/v1 Job (same uid as referenced) whose controller is the CronJob
 *    `ci-worker` (same uid as referenced).
 * Every call asks the API server afresh: nothing learned about a token or pod is kept.
 */
export function kubernetesWorkerVerifier(opts: KubernetesVerifierOptions): WorkerVerifier {
  const { apis, namespace, audience, log } = opts;
  const clock = opts.clock ?? systemClock;
  const expectedUser = `system:serviceaccount:${namespace}:${WORKER_NAME}`;

  /** One API call; its failure becomes a refusal or a 503, never an unhandled error. */
  async function ask<T>(what: string, call: () => Promise<T>, fields: Record<string, unknown>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      const failure = classifyApiError(err);
      if (failure.kind === "unavailable") unavailable(log, `${what}: ${failure.detail}`, err);
      return refuse(log, `${what}: the API server answered ${failure.detail}`, fields);
    }
  }

  return {
    async verify(authorization): Promise<WorkerIdentity> {
      const token = bearerToken(authorization, log);

      // 1. Who the token belongs to, and for which audience.
      const review = await ask(
        "TokenReview",
        () =>
          apis.authentication.createTokenReview({
            body: {
              apiVersion: "authentication.k8s.io/v1",
              kind: "TokenReview",
              spec: { token, audiences: [audience] },
            },
          }),
        {},
      );
      const status = review.status;
      if (status?.authenticated !== true)
        refuse(log, "TokenReview did not authenticate the token", { error: status?.error });
      // An API server that ignores spec.audiences would authenticate a token minted for anything.
      if (!status.audiences?.includes(audience))
        refuse(log, "TokenReview did not confirm our audience", { audience, audiences: status.audiences });
      const username = status.user?.username;
      if (username !== expectedUser)
        refuse(log, "the token belongs to another identity", { username, expectedUser });

      // 2. The pod the token is bound to.
      const podName = single(status.user?.extra?.[POD_NAME]);
      const podUid = single(status.user?.extra?.[POD_UID]);
      if (!podName || !podUid) refuse(log, "the token is not bound to a pod", { username });
      const fields = { namespace, pod: podName };

      // 3. The pod as it is now: the same object the token was minted for, young enough.
      const pod = await ask(
        "reading the pod",
        () => apis.core.readNamespacedPod({ name: podName, namespace }),
        fields,
      );
      if (pod.metadata?.uid !== podUid)
        refuse(log, "the pod was replaced since the token was issued", {
          ...fields,
          tokenPodUid: podUid,
          podUid: pod.metadata?.uid,
        });
      if (pod.spec?.serviceAccountName !== WORKER_NAME)
        refuse(log, "the pod does not run as the worker service account", {
          ...fields,
          serviceAccount: pod.spec?.serviceAccountName,
        });
      const created = pod.metadata?.creationTimestamp;
      const ageMs = created ? clock.now().getTime() - new Date(created).getTime() : Number.NaN;
      if (!(ageMs < MAX_POD_AGE_MS))
        refuse(log, "the pod is 4 hours old or older", { ...fields, createdAt: created, ageMs });

      // 4. Owner chain: pod -> Job -> CronJob ci-worker, each reference checked by uid.
      const jobRef = controllerOf(pod.metadata);
      if (!isBatchV1(jobRef, "Job"))
        refuse(log, "the pod is not controlled by a Job", { ...fields, controller: describe(jobRef) });
      const job = await ask(
        "reading the pod's Job",
        () => apis.batch.readNamespacedJob({ name: jobRef.name, namespace }),
        { ...fields, job: jobRef.name },
      );
      if (job.metadata?.uid !== jobRef.uid)
        refuse(log, "the pod's Job was replaced", { ...fields, job: jobRef.name, jobUid: job.metadata?.uid });
      const cronRef = controllerOf(job.metadata);
      if (!isBatchV1(cronRef, "CronJob") || cronRef.name !== WORKER_NAME)
        refuse(log, `the pod's Job is not controlled by the CronJob ${WORKER_NAME}`, {
          ...fields,
          job: jobRef.name,
          controller: describe(cronRef),
        });
      const cron = await ask(
        "reading the CronJob",
        () => apis.batch.readNamespacedCronJob({ name: WORKER_NAME, namespace }),
        { ...fields, job: jobRef.name },
      );
      if (cron.metadata?.uid !== cronRef.uid)
        refuse(log, `the CronJob ${WORKER_NAME} was replaced since the Job was created`, {
          ...fields,
          job: jobRef.name,
        });

      return { worker: `k8s:${namespace}/${podName}` };
    },
  };
}

/** The one value of a user.extra entry; several values are as suspect as none. */
function single(values: string[] | undefined): string | undefined {
  return values?.length === 1 && values[0] !== "" ? values[0] : undefined;
}

/** The ownerReference with `controller: true` (Kubernetes allows at most one). */
function controllerOf(meta: V1ObjectMeta | undefined): V1OwnerReference | undefined {
  return meta?.ownerReferences?.find((r) => r.controller === true);
}

/** A reference to a batch/v1 object of `kind` (a kind of the same name in another group is not ours). */
function isBatchV1(ref: V1OwnerReference | undefined, kind: string): ref is V1OwnerReference {
  return ref?.apiVersion === "batch/v1" && ref.kind === kind;
}

function describe(ref: V1OwnerReference | undefined): string {
  return ref ? `${ref.apiVersion} ${ref.kind} ${ref.name}` : "none";
}
