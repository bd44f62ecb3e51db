import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A Kubernetes API server stand-in for tests: plain HTTP on 127.0.0.1 speaking the real REST
 * protocol (JSON objects, `Status` errors) for exactly the calls the worker check makes: create
 * TokenReview, read Pod, read Job, read CronJob. It requires the scheduler's bearer token, and
 * reviews tokens like the real server does for projected service-account tokens: unknown token,
 * audience mismatch, and a bound pod that is gone or has another uid all answer
 * `authenticated: false`.
 */
type Obj = Record<string, any>;
type Kind = "pods" | "jobs" | "cronjobs";

interface TokenRecord {
  namespace: string;
  serviceAccount: string;
  audiences: string[];
  /** Absent for a legacy (Secret-based) token, which is bound to no pod. */
  pod?: { name: string; uid: string };
}

export interface WorkerPodOptions {
  /** Pod name; defaults to `<job>-<5 chars>` as the Job controller names pods. */
  name?: string;
  namespace?: string;
  serviceAccount?: string;
  createdAt?: Date;
  /** pod -> Job -> CronJob ci-worker (default), a bare Job, a Job of CronJob other-worker, or no owner. */
  ownerChain?: "cronjob" | "job-only" | "other-cronjob" | "none";
  /** Audiences the pod's projected token is minted for; default ["quire-ci"]. */
  audiences?: string[];
}

export interface FakeKubernetes {
  /** Base URL for SVC_CI_K8S_API_URL. */
  url: string;
  /** The bearer token the scheduler must send (SVC_CI_K8S_TOKEN). */
  schedulerToken: string;
  /** Every request, in arrival order. */
  requests: Array<{ method: string; path: string }>;
  /** When set, every request is answered with this status and a `Status` body. */
  outage: number | undefined;
  /** When true, requests are held without an answer (until close). */
  stall: boolean;
  /**
   * When true, TokenReview behaves like a server without audience support: it ignores
   * spec.audiences and reports the token's own audiences.
   */
  ignoreAudiences: boolean;
  /** Adds a worker pod (and its owners) and returns the pod's projected token. */
  addWorkerPod(opts?: WorkerPodOptions): string;
  /** A legacy Secret-based service-account token: authenticates, but is bound to no pod. */
  addLegacyToken(opts?: { namespace?: string; serviceAccount?: string }): string;
  /** The stored object (live: changes apply to later reads). */
  get(kind: Kind, name: string, namespace?: string): Obj | undefined;
  /** Deletes and creates the object again under the same name: same content, new uid. */
  recreate(kind: Kind, name: string, namespace?: string): void;
  /** Deletes the object (tokens bound to a deleted pod stop authenticating). */
  delete(kind: Kind, name: string, namespace?: string): void;
  /** Runs `fn` after the next TokenReview is decided and before it is answered. */
  afterNextTokenReview(fn: () => void): void;
  close(): Promise<void>;
}

const json = (res: http.ServerResponse, code: number, body: unknown) => {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};
const status = (code: number, reason: string, message: string, details?: Obj) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  ...(details ? { details } : {}),
  code,
});
/** Kubernetes timestamps have whole seconds. */
const timestamp = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");
const ownerRef = (o: Obj) => ({
  apiVersion: o["apiVersion"],
  kind: o["kind"],
  name: o["metadata"].name,
  uid: o["metadata"].uid,
  controller: true,
  blockOwnerDeletion: true,
});

export async function startFakeKubernetes(): Promise<FakeKubernetes> {
  const objects = new Map<string, Obj>();
  const tokens = new Map<string, TokenRecord>();
  const key = (kind: Kind, ns: string, name: string) => `${kind}/${ns}/${name}`;
  let afterReview: (() => void) | undefined;
  let seq = 0;

  function put(kind: Kind, apiVersion: string, ns: string, name: string, extra: Obj, owner?: Obj): Obj {
    const typeName = { pods: "Pod", jobs: "Job", cronjobs: "CronJob" }[kind];
    const { metadata, ...rest } = extra;
    const obj = {
      apiVersion,
      kind: typeName,
      metadata: {
        name,
        namespace: ns,
        uid: randomUUID(),
        creationTimestamp: timestamp(new Date()),
        ...(owner ? { ownerReferences: [ownerRef(owner)] } : {}),
        ...metadata,
      },
      ...rest,
    };
    objects.set(key(kind, ns, name), obj);
    return obj;
  }

  function review(spec: Obj): Obj {
    const record = tokens.get(String(spec["token"]));
    if (!record) return { authenticated: false, error: "[invalid bearer token, token lookup failed]" };
    const wanted: string[] = spec["audiences"]?.length
      ? spec["audiences"]
      : ["https://kubernetes.default.svc"];
    const audiences = fake.ignoreAudiences
      ? record.audiences
      : record.audiences.filter((a) => wanted.includes(a));
    if (audiences.length === 0)
      return {
        authenticated: false,
        error: `[invalid bearer token, token audiences ${JSON.stringify(record.audiences)} is invalid for the target audiences ${JSON.stringify(wanted)}]`,
      };
    const extra: Obj = { "authentication.kubernetes.io/credential-id": [`JTI=${randomUUID()}`] };
    if (record.pod) {
      const pod = objects.get(key("pods", record.namespace, record.pod.name));
      if (!pod) return { authenticated: false, error: `pods "${record.pod.name}" not found` };
      if (pod["metadata"].uid !== record.pod.uid)
        return {
          authenticated: false,
          error: "the UID in the bound object reference does not match the UID in record",
        };
      extra["authentication.kubernetes.io/pod-name"] = [record.pod.name];
      extra["authentication.kubernetes.io/pod-uid"] = [record.pod.uid];
    }
    const ns = record.namespace;
    return {
      authenticated: true,
      user: {
        username: `system:serviceaccount:${ns}:${record.serviceAccount}`,
        uid: randomUUID(),
        groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
        extra,
      },
      audiences,
    };
  }

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    fake.requests.push({ method: req.method ?? "", path });
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c.toString("utf8");
    });
    req.on("end", () => {
      if (fake.stall) return;
      if (fake.outage !== undefined)
        return json(
          res,
          fake.outage,
          status(fake.outage, "ServiceUnavailable", "etcdserver: request timed out"),
        );
      if (req.headers.authorization !== `Bearer ${fake.schedulerToken}`)
        return json(res, 401, status(401, "Unauthorized", "Unauthorized"));
      if (req.method === "POST" && path === "/apis/authentication.k8s.io/v1/tokenreviews") {
        const body = JSON.parse(raw) as Obj;
        const answer = { ...body, metadata: { creationTimestamp: null }, status: review(body["spec"] ?? {}) };
        const after = afterReview;
        afterReview = undefined;
        after?.();
        return json(res, 201, answer);
      }
      const m =
        /^\/api\/v1\/namespaces\/([^/]+)\/(pods)\/([^/]+)$/.exec(path) ??
        /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/(jobs|cronjobs)\/([^/]+)$/.exec(path);
      if (req.method !== "GET" || !m)
        return json(res, 404, status(404, "NotFound", "the server could not find the requested resource"));
      const [, ns, kind, name] = m as unknown as [string, string, Kind, string];
      const obj = objects.get(key(kind, ns, name));
      if (!obj) return json(res, 404, status(404, "NotFound", `${kind} "${name}" not found`, { name, kind }));
      json(res, 200, obj);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  const fake: FakeKubernetes = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    schedulerToken: `scheduler-${randomBytes(12).toString("base64url")}`,
    requests: [],
    outage: undefined,
    stall: false,
    ignoreAudiences: false,
    addWorkerPod(opts = {}) {
      const ns = opts.namespace ?? "ci";
      const chain = opts.ownerChain ?? "cronjob";
      let job: Obj | undefined;
      if (chain !== "none") {
        const cronName =
          chain === "cronjob" ? "ci-worker" : chain === "other-cronjob" ? "other-worker" : undefined;
        let cron: Obj | undefined;
        if (cronName) {
          cron =
            objects.get(key("cronjobs", ns, cronName)) ??
            put("cronjobs", "batch/v1", ns, cronName, { spec: { schedule: "* * * * *" } });
        }
        job = put("jobs", "batch/v1", ns, `${cronName ?? "adhoc"}-${29_000_000 + ++seq}`, { spec: {} }, cron);
      }
      const name =
        opts.name ?? `${job?.["metadata"].name ?? "ci-worker"}-${randomBytes(4).toString("hex").slice(0, 5)}`;
      const serviceAccount = opts.serviceAccount ?? "ci-worker";
      const pod = put(
        "pods",
        "v1",
        ns,
        name,
        {
          metadata: { creationTimestamp: timestamp(opts.createdAt ?? new Date()) },
          spec: {
            serviceAccountName: serviceAccount,
            containers: [{ name: "worker", image: "quire/ci-worker" }],
          },
          status: { phase: "Running" },
        },
        job,
      );
      const token = `eyJ.${randomBytes(24).toString("base64url")}`;
      tokens.set(token, {
        namespace: ns,
        serviceAccount,
        audiences: opts.audiences ?? ["quire-ci"],
        pod: { name, uid: pod["metadata"].uid },
      });
      return token;
    },
    addLegacyToken(opts = {}) {
      const token = `eyJ.legacy.${randomBytes(24).toString("base64url")}`;
      // A real API server authenticates legacy tokens only for its own audiences; this one lets it
      // pass ours, so that a test reaches the pod-binding check that guards against such a server.
      tokens.set(token, {
        namespace: opts.namespace ?? "ci",
        serviceAccount: opts.serviceAccount ?? "ci-worker",
        audiences: ["quire-ci"],
      });
      return token;
    },
    get: (kind, name, namespace = "ci") => objects.get(key(kind, namespace, name)),
    recreate(kind, name, namespace = "ci") {
      const obj = objects.get(key(kind, namespace, name));
      if (!obj) throw new Error(`no ${kind} ${namespace}/${name}`);
      obj["metadata"] = { ...obj["metadata"], uid: randomUUID(), creationTimestamp: timestamp(new Date()) };
    },
    delete(kind, name, namespace = "ci") {
      objects.delete(key(kind, namespace, name));
    },
    afterNextTokenReview(fn) {
      afterReview = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
