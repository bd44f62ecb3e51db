import {
  ApiException,
  AuthenticationV1Api,
  BatchV1Api,
  CoreV1Api,
  createConfiguration,
  KubeConfig,
  type RequestContext,
  type ResponseContext,
  ServerConfiguration,
  type User,
} from "@kubernetes/client-node";
import { GoogleAuth } from "google-auth-library";
import { checkKubernetesServer } from "./k8s-settings.ts";

/** The three API groups the worker check reads. Built once; they hold no per-claim state. */
export interface KubernetesApis {
  authentication: AuthenticationV1Api;
  core: CoreV1Api;
  batch: BatchV1Api;
}

/** How the scheduler itself authenticates to the API server. */
export type SchedulerCredential =
  | { token: string }
  /** Called before every request; the source caches and refreshes on its own. */
  | { tokenSource: () => Promise<string> };

export interface KubernetesApiOptions {
  /** API server base URL: https, or http on a loopback address (tests). */
  server: string;
  /** PEM file with the CA that signed the API server's certificate; system roots when absent. */
  caFile?: string | undefined;
  credential: SchedulerCredential;
  /** Per-request limit, so a hung API server answers the claim with 503 instead of holding it. */
  timeoutMs: number;
}

const CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform";
// Our own authenticator's provider name; the library's built-in ones ("gcp", "azure", "oidc", exec)
// shell out or read kubeconfig files, which a Cloud Function has neither of.
const TOKEN_SOURCE_PROVIDER = "quire-token-source";

/**
 * A Google OAuth access token for the function's service account (Application Default
 * Credentials: the metadata server on Cloud Functions). GKE accepts it as a bearer token and maps
 * it to the IAM identity, which is how a function reaches a GKE control plane.
 */
export function googleAccessTokenSource(): () => Promise<string> {
  const auth = new GoogleAuth({ scopes: CLOUD_PLATFORM });
  return async () => {
    const token = await auth.getAccessToken();
    if (!token) throw new Error("Application Default Credentials returned no access token");
    return token;
  };
}

/** Clients for the API server in `opts`; throws at start-up for a URL or CA file that cannot work. */
export function kubernetesApis(opts: KubernetesApiOptions): KubernetesApis {
  checkKubernetesServer(opts.server, opts.caFile);
  const url = new URL(opts.server);
  const kc = new KubeConfig();
  const user: User =
    "token" in opts.credential
      ? { name: "scheduler", token: opts.credential.token }
      : { name: "scheduler", authProvider: { name: TOKEN_SOURCE_PROVIDER } };
  if ("tokenSource" in opts.credential) {
    const source = opts.credential.tokenSource;
    kc.addAuthenticator({
      isAuthProvider: (u) => u.authProvider?.name === TOKEN_SOURCE_PROVIDER,
      async applyAuthentication(_u, httpOpts) {
        httpOpts.headers = { ...httpOpts.headers, Authorization: `Bearer ${await source()}` };
      },
    });
  }
  kc.loadFromOptions({
    clusters: [
      {
        name: "ci",
        server: opts.server,
        caFile: opts.caFile,
        // The library refuses http:// unless this is set; plain http has no TLS to skip, and
        // https always verifies (it is false there).
        skipTLSVerify: url.protocol === "http:",
      },
    ],
    users: [user],
    contexts: [{ name: "ci", cluster: "ci", user: "scheduler" }],
    currentContext: "ci",
  });

  // makeApiClient has no hook for middleware, so build the configuration it would, plus a timeout.
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(opts.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [
      {
        pre: async (ctx: RequestContext) => {
          ctx.setSignal(AbortSignal.timeout(opts.timeoutMs));
          return ctx;
        },
        post: async (ctx: ResponseContext) => ctx,
      },
    ],
  });
  return {
    authentication: new AuthenticationV1Api(configuration),
    core: new CoreV1Api(configuration),
    batch: new BatchV1Api(configuration),
  };
}

/** What a failed API call means for the claim. */
export type ApiFailure =
  | { kind: "refused"; detail: string }
  /** The API server could not answer: says nothing about the worker. */
  | { kind: "unavailable"; detail: string };

/**
 * Sorts an error thrown by a client call. An answer of the API server (4xx) is a refusal: the
 * object is missing, or the server would not let us look, and either way the claim cannot be
 * proven. No answer at all (connection refused, timeout, TLS failure, an unreadable body) or a
 * 5xx/429 means the cluster is unwell, which must not look like bad worker credentials.
 */
export function classifyApiError(err: unknown): ApiFailure {
  if (err instanceof ApiException) {
    const code = err.code;
    const detail = `${code} ${statusMessage(err.body) ?? err.message}`;
    return code >= 500 || code === 429 ? { kind: "unavailable", detail } : { kind: "refused", detail };
  }
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
  return { kind: "unavailable", detail: `${err instanceof Error ? err.message : String(err)}${cause}` };
}

/** The `message` of a Kubernetes `Status` body, when the body is one. */
function statusMessage(body: unknown): string | undefined {
  try {
    const parsed = typeof body === "string" ? (JSON.parse(body) as unknown) : body;
    const message = (parsed as { message?: unknown } | undefined)?.message;
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}
