import { isIP } from "node:net";
import { z } from "zod";
import { isPlausibleEmail } from "./auth/email.ts";

/** True for hosts that only this machine can reach; an `http://` issuer is allowed only there. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === "" ? undefined : v))
  .optional();

const integer = (fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return fallback;
      if (!/^\d+$/.test(v.trim())) {
        ctx.addIssue({ code: "custom", message: `must be a whole number, got "${v}"` });
        return z.NEVER;
      }
      const n = Number(v);
      if (n < min || n > max) {
        ctx.addIssue({ code: "custom", message: `must be between ${min} and ${max}, got ${n}` });
        return z.NEVER;
      }
      return n;
    });

/** One identity, as a signed-in caller's would be (shared/auth/email.ts). */
const identitySetting = optionalText.refine((v) => v === undefined || isPlausibleEmail(v), {
  message: "must be an email address",
});

const identityList = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
  );

/** Database user names, comma-separated (an IAM user is an email without `.gserviceaccount.com`). */
const databaseUsers = identityList.refine((names) => names.every((n) => /^[\w.@-]+$/.test(n)), {
  message: "must be database user names, comma-separated",
});

/**
 * A URL setting that must be https, or plain http on this machine only; blank means `fallback`.
 * Trailing slashes are dropped so paths can be appended. Also the CI worker's scheduler URL.
 */
export function secureUrlSetting(fallback: string) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      const raw = v === undefined || v.trim() === "" ? fallback : v.trim();
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        ctx.addIssue({ code: "custom", message: `must be a URL, got "${raw}"` });
        return z.NEVER;
      }
      if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
        ctx.addIssue({
          code: "custom",
          message: "must be https (http is allowed only on a loopback address)",
        });
        return z.NEVER;
      }
      return raw.replace(/\/+$/, "");
    });
}

const issuerUrl = secureUrlSetting("https://accounts.google.com");

/**
 * STORAGE_EMULATOR_HOST, the variable every Cloud Storage client reads, as a base URL. A bare
 * `host:port` means http, as in the Go client; a trailing /storage/v1 is dropped, so the forms
 * other tools document all work.
 */
const emulatorUrl = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === "") return undefined;
    const raw = /^[a-z][a-z0-9+.-]*:\/\//i.test(v.trim()) ? v.trim() : `http://${v.trim()}`;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      ctx.addIssue({ code: "custom", message: `must be host:port or a URL, got "${v}"` });
      return z.NEVER;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      ctx.addIssue({ code: "custom", message: `must be http or https, got "${v}"` });
      return z.NEVER;
    }
    return raw.replace(/\/+$/, "").replace(/\/storage\/v1$/, "");
  });

/**
 * SVC_ARCHIVE_SIGNING_KEY: the presigned-archive HMAC key, at least 32 bytes, as hex (an even
 * number of hex digits) or else base64 / base64url. Unset: a key generated once and kept in the
 * database (docs/archives.md).
 */
const signingKey = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const raw = v?.trim() ?? "";
    if (raw === "") return undefined;
    const key = decodeKey(raw);
    if (typeof key === "string") {
      ctx.addIssue({ code: "custom", message: key });
      return z.NEVER;
    }
    return key;
  });

/** A key of at least 32 bytes as hex or base64 / base64url, or why it is not one. */
function decodeKey(raw: string): Buffer | string {
  let key: Buffer | undefined;
  if (/^([0-9a-fA-F]{2})+$/.test(raw)) key = Buffer.from(raw, "hex");
  else if (/^[A-Za-z0-9+/]+={0,2}$/.test(raw) || /^[A-Za-z0-9_-]+$/.test(raw))
    key = Buffer.from(raw, /[_-]/.test(raw) ? "base64url" : "base64");
  if (key === undefined) return "must be hex or base64";
  if (key.length < 32) return `must decode to at least 32 bytes, got ${key.length}`;
  return key;
}

/**
 * SVC_SESSION_KEYS: the session cookies' HMAC keys, comma-separated, each as SVC_ARCHIVE_SIGNING_KEY.
 * The first signs; every one verifies, so a new key goes first and the old one stays until its
 * cookies have expired (docs/sessions.md). Unset: a key generated once and kept in the database.
 */
const keyList = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const keys: Buffer[] = [];
    for (const [i, raw] of (v ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "")
      .entries()) {
      const key = decodeKey(raw);
      if (typeof key === "string") {
        ctx.addIssue({ code: "custom", message: `key ${i + 1} ${key}` });
        return z.NEVER;
      }
      keys.push(key);
    }
    return keys;
  });

/** `true` or `false` (unset: `false`); anything else is refused rather than guessed. */
const flag = z
  .enum(["true", "false", ""], { error: "must be true or false" })
  .optional()
  .transform((v) => v === "true");

/** SVC_WEBHOOK_TASKS_QUEUE: a full Cloud Tasks queue name. */
const tasksQueue = optionalText.refine(
  (v) => v === undefined || /^projects\/[^/]+\/locations\/[^/]+\/queues\/[^/]+$/.test(v),
  {
    message: "must be projects/PROJECT/locations/LOCATION/queues/QUEUE",
  },
);

/**
 * A URL setting: http or https, no query or fragment, any trailing `/` dropped. With
 * `httpsUnlessLoopback`, plain http is refused except on a loopback host (an issuer, whose keys a
 * verifier would otherwise fetch in the clear).
 */
const urlSetting = (opts: { httpsUnlessLoopback: boolean }) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return undefined;
    let url: URL;
    try {
      url = new URL(v);
    } catch {
      ctx.addIssue({ code: "custom", message: `must be a URL, got "${v}"` });
      return z.NEVER;
    }
    const plainAllowed = !opts.httpsUnlessLoopback || isLoopbackHost(url.hostname);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && plainAllowed)) {
      const rule = opts.httpsUnlessLoopback
        ? "https (http is allowed only on a loopback address)"
        : "http(s)";
      ctx.addIssue({ code: "custom", message: `must be ${rule}` });
      return z.NEVER;
    }
    if (url.search !== "" || url.hash !== "") {
      ctx.addIssue({ code: "custom", message: "must have no query or fragment" });
      return z.NEVER;
    }
    return v.replace(/\/+$/, "");
  });

/**
 * HOST: the address the local server and the event stream service listen on. An IP address (or
 * `localhost`), not a name: whether DEV_IDENTITY may be set depends on it being loopback, which
 * a name that DNS resolves could change behind the check's back.
 */
const listenHost = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const host = v?.trim() || "127.0.0.1";
    if (host !== "localhost" && isIP(host.replace(/^\[|\]$/g, "")) === 0) {
      ctx.addIssue({ code: "custom", message: `must be an IP address or localhost, got "${host}"` });
      return z.NEVER;
    }
    return host.replace(/^\[|\]$/g, "");
  });

/** SVC_OIDC_ISSUER_URL: the job-token issuer ({oidc_url}). */
const jobIssuerUrl = urlSetting({ httpsUnlessLoopback: true });
/** The other base URLs of the CI pieces (shared/ci/urls.ts). */
const baseUrl = urlSetting({ httpsUnlessLoopback: false });

/** A Cloud KMS key version name. */
const kmsKeyVersion =
  /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+\/cryptoKeyVersions\/[^/]+$/;

/** A Cloud KMS CryptoKey name (no version: KMS encrypts with the primary one). */
const kmsCryptoKey = /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+$/;

/** The environment Quire reads, validated once at start. Each key is the variable's own name. */
export const envSchema = z
  .object({
    DATABASE_URL: optionalText,
    SVC_CLOUD_SQL_INSTANCE: optionalText.refine(
      (v) => v === undefined || /^[^:\s]+:[^:\s]+:[^:\s]+$/.test(v),
      {
        message: "must be an instance connection name, PROJECT:REGION:INSTANCE",
      },
    ),
    SVC_CLOUD_SQL_IP_TYPE: z.enum(["PUBLIC", "PRIVATE", "PSC"]).default("PRIVATE"),
    SVC_CLOUD_SQL_ADMIN_ENDPOINT: baseUrl,
    SVC_DB_IAM_USER: optionalText,
    // A built-in (password) user instead: the migration step's, which owns the schema (db/grants.ts).
    SVC_DB_USER: optionalText,
    SVC_DB_PASSWORD: optionalText,
    SVC_DB_NAME: z.string().trim().min(1).default("quire"),
    // The migration step grants these users what the event stream service needs (db/grants.ts).
    SVC_DB_STREAM_USERS: databaseUsers,
    // ... and these (the functions') read and write every table, without changing the schema.
    SVC_DB_APP_USERS: databaseUsers,
    PORT: integer(8080, 0, 65535),
    HOST: listenHost,
    DEV_IDENTITY: identitySetting,
    // Development mode as several people (docs/configuration.md): a request picks one by header or cookie.
    DEV_IDENTITIES: identityList.refine((vs) => vs.every(isPlausibleEmail), {
      message: "must be email addresses, comma-separated",
    }),
    BOOTSTRAP_ADMIN: identitySetting,
    GLOBAL_ADMINS: identityList,
    LOG_FORMAT: z.enum(["json", "text"]).default("json"),
    LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
    SVC_BLOB_STORE: z.enum(["local", "gcs"]).default("local"),
    SVC_BLOB_BUCKET: optionalText,
    SVC_BLOB_THRESHOLD_BYTES: integer(1_048_576, 0, 2 ** 31),
    SVC_BLOB_LOCAL_DIR: z.string().trim().min(1).default("/tmp/svc-blobs"),
    STORAGE_EMULATOR_HOST: emulatorUrl,
    SVC_MAX_BODY_BYTES: integer(32 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    SVC_DATA_DIR: z.string().trim().min(1).default(".data"),
    SVC_EMBEDDED_PG_PORT: integer(54329, 1, 65535),
    OIDC_ISSUER: issuerUrl,
    OIDC_CLIENT_ID: optionalText,
    OIDC_CLIENT_SECRET: optionalText,
    SVC_CLI_CLIENT_ID: optionalText,
    SVC_CLI_CLIENT_SECRET: optionalText,
    SVC_SESSION_KEYS: keyList,
    SVC_OPA_PATH: optionalText,
    SVC_ARCHIVE_SIGNING_KEY: signingKey,
    SVC_EVENT_FANOUT: z.enum(["postgres", "pubsub"]).default("postgres"),
    SVC_EVENT_RETENTION_DAYS: integer(7, 1, 3650),
    SVC_PUBSUB_TOPIC: z.string().trim().min(1).default("quire-events"),
    SVC_PUBSUB_SUBSCRIPTION: optionalText,
    PUBSUB_EMULATOR_HOST: optionalText,
    GOOGLE_CLOUD_PROJECT: optionalText,
    SVC_WEBHOOK_ALLOW_PRIVATE: flag,
    SVC_CHECK_RESPONSES: flag,
    SVC_WEBHOOK_DELIVERY: z.enum(["postgres", "cloudtasks"]).default("postgres"),
    SVC_WEBHOOK_TASKS_QUEUE: tasksQueue,
    SVC_WEBHOOK_TASKS_TARGET_URL: optionalText.refine((v) => v === undefined || /^https?:\/\/[^/]/.test(v), {
      message: "must be an http(s) URL",
    }),
    SVC_WEBHOOK_TASKS_SERVICE_ACCOUNT: optionalText,
    // The autoMerge function's internal route (docs/auto-merge.md): set, auto-merge runs through
    // the outbox and Cloud Tasks there.
    SVC_AUTO_MERGE_TASKS_TARGET_URL: optionalText.refine(
      (v) => v === undefined || /^https?:\/\/[^/]/.test(v),
      { message: "must be an http(s) URL" },
    ),
    CLOUD_TASKS_EMULATOR_HOST: optionalText,
    SVC_OIDC_ISSUER_URL: jobIssuerUrl,
    SVC_JOB_SIGNER: z.enum(["local", "kms"]).default("local"),
    SVC_JOB_KMS_KEY_VERSION: optionalText.refine((v) => v === undefined || kmsKeyVersion.test(v), {
      message: "must be projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/N",
    }),
    SVC_JOB_KMS_PREVIOUS_KEY_VERSIONS: identityList.refine((vs) => vs.every((v) => kmsKeyVersion.test(v)), {
      message: "must be comma-separated projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/N",
    }),
    SVC_JOB_KMS_ENDPOINT: optionalText,
    // Repo secrets (docs/secrets.md): the KMS CryptoKey that wraps their data keys; unset, a local key.
    SVC_SECRETS_KMS_KEY: optionalText.refine((v) => v === undefined || kmsCryptoKey.test(v), {
      message: "must be projects/P/locations/L/keyRings/R/cryptoKeys/K",
    }),
    SVC_SECRETS_KMS_ENDPOINT: optionalText,
    // The transparency log's key (docs/verifiable-history.md): a KMS EC_SIGN_ED25519 version; unset, a local key.
    SVC_LOG_KMS_KEY_VERSION: optionalText.refine((v) => v === undefined || kmsKeyVersion.test(v), {
      message: "must be projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/N",
    }),
    SVC_LOG_KMS_ENDPOINT: optionalText,
    SVC_PUBLIC_URL: baseUrl,
    SVC_OIDC_INTERNAL_URL: baseUrl,
    SVC_JOB_API_AUDIENCE: z.string().trim().min(1).default("quire"),
    RUNNER_URL: baseUrl,
    SVC_CI_WEBHOOK_SECRET: optionalText.refine((v) => v === undefined || v.length >= 16, {
      message: "must be at least 16 characters",
    }),
    SVC_CI_WORKER_TOKEN: optionalText.refine((v) => v === undefined || v.length >= 16, {
      message: "must be at least 16 characters",
    }),
    SVC_CI_K8S_API_URL: baseUrl,
    SVC_CI_K8S_CA_FILE: optionalText,
    SVC_CI_K8S_TOKEN: optionalText,
    SVC_CI_K8S_NAMESPACE: z.string().trim().min(1).default("ci"),
    SVC_CI_K8S_AUDIENCE: z.string().trim().min(1).default("quire-ci"),
    SVC_CI_LOG_STORE: z.enum(["local", "gcs"]).default("local"),
    SVC_CI_LOG_BUCKET: optionalText,
    SVC_CI_LOG_DIR: z.string().trim().min(1).default("/tmp/svc-ci-logs"),
    SVC_INTERNAL_INVOKERS: identityList.refine((vs) => vs.every(isPlausibleEmail), {
      message: "must be comma-separated service account emails",
    }),
    SVC_INTERNAL_AUDIENCE: identityList,
    SVC_INTERNAL_ISSUER: issuerUrl,
    SVC_CI_TIMERS: z
      .enum(["true", "false", ""], { error: "must be true or false" })
      .optional()
      .transform((v) => v !== "false"),
  })
  .superRefine((env, ctx) => {
    // With a development identity anyone who reaches the port acts as it, without a token.
    const devMode = env.DEV_IDENTITY !== undefined || env.DEV_IDENTITIES.length > 0;
    if (devMode && !isLoopbackHost(env.HOST)) {
      ctx.addIssue({
        code: "custom",
        path: [env.DEV_IDENTITY ? "DEV_IDENTITY" : "DEV_IDENTITIES"],
        message: `is refused with HOST=${env.HOST}: it is allowed only on a loopback address (127.0.0.1, ::1, localhost), since anyone who reaches the port acts as it without a token`,
      });
    }
    if (
      env.DEV_IDENTITY &&
      env.DEV_IDENTITIES.length > 0 &&
      !env.DEV_IDENTITIES.some((d) => d.toLowerCase() === env.DEV_IDENTITY?.toLowerCase())
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["DEV_IDENTITY"],
        message:
          "must be one of DEV_IDENTITIES when both are set (it is the default identity); or unset it, and the first of DEV_IDENTITIES is the default",
      });
    }
    if (env.SVC_BLOB_STORE === "gcs" && !env.SVC_BLOB_BUCKET) {
      ctx.addIssue({
        code: "custom",
        path: ["SVC_BLOB_BUCKET"],
        message: "is required when SVC_BLOB_STORE=gcs",
      });
    }
    if (env.SVC_CI_LOG_STORE === "gcs" && !env.SVC_CI_LOG_BUCKET) {
      ctx.addIssue({
        code: "custom",
        path: ["SVC_CI_LOG_BUCKET"],
        message: "is required when SVC_CI_LOG_STORE=gcs",
      });
    }
    if (env.SVC_CLOUD_SQL_INSTANCE && !env.SVC_DB_IAM_USER && !env.SVC_DB_USER) {
      ctx.addIssue({
        code: "custom",
        path: ["SVC_DB_IAM_USER"],
        message: "is required when SVC_CLOUD_SQL_INSTANCE is set (or SVC_DB_USER with SVC_DB_PASSWORD)",
      });
    }
    if (env.SVC_DB_IAM_USER && env.SVC_DB_USER) {
      ctx.addIssue({
        code: "custom",
        path: ["SVC_DB_USER"],
        message: "is refused together with SVC_DB_IAM_USER: log in either as an IAM user or with a password",
      });
    }
    if (env.SVC_DB_USER && (!env.SVC_DB_PASSWORD || !env.SVC_CLOUD_SQL_INSTANCE)) {
      ctx.addIssue({
        code: "custom",
        path: ["SVC_DB_USER"],
        message:
          "needs SVC_DB_PASSWORD and SVC_CLOUD_SQL_INSTANCE (with DATABASE_URL, put the user in the URL)",
      });
    }
    if (env.SVC_CLOUD_SQL_INSTANCE && env.DATABASE_URL) {
      ctx.addIssue({
        code: "custom",
        path: ["DATABASE_URL"],
        message: "is refused together with SVC_CLOUD_SQL_INSTANCE: set one way to reach the database",
      });
    }
    if (env.SVC_CI_K8S_API_URL && env.SVC_CI_WORKER_TOKEN) {
      ctx.addIssue({
        code: "custom",
        path: ["SVC_CI_WORKER_TOKEN"],
        message:
          "is refused when a Kubernetes configuration (SVC_CI_K8S_API_URL) is set: workers prove who they are with TokenReview",
      });
    }
    if (env.SVC_JOB_SIGNER === "kms" && !env.SVC_JOB_KMS_KEY_VERSION) {
      ctx.addIssue({
        code: "custom",
        path: ["SVC_JOB_KMS_KEY_VERSION"],
        message: "is required when SVC_JOB_SIGNER=kms",
      });
    }
    if (env.SVC_AUTO_MERGE_TASKS_TARGET_URL && env.SVC_WEBHOOK_DELIVERY !== "cloudtasks") {
      ctx.addIssue({
        code: "custom",
        path: ["SVC_AUTO_MERGE_TASKS_TARGET_URL"],
        message:
          "needs SVC_WEBHOOK_DELIVERY=cloudtasks: its events reach the autoMerge function as Cloud Tasks tasks (without it, the server's own relay attempts auto-merges)",
      });
    }
    for (const key of ["SVC_WEBHOOK_TASKS_QUEUE", "SVC_WEBHOOK_TASKS_TARGET_URL"] as const) {
      if (env.SVC_WEBHOOK_DELIVERY === "cloudtasks" && !env[key])
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: "is required when SVC_WEBHOOK_DELIVERY=cloudtasks",
        });
    }
  });

export type Env = z.infer<typeof envSchema>;

/**
 * The value of a setting that loadConfig's cross-field rules require in this configuration (a
 * bucket when its store is gcs, ...). Throws when it is absent anyway, which only a configuration
 * that did not come from loadConfig can be.
 */
export function requiredSetting<K extends keyof Env>(config: Env, key: K): NonNullable<Env[K]> {
  const value = config[key];
  if (value === undefined || value === null)
    throw new Error(`the configuration has no ${key}, which this configuration requires`);
  return value;
}

/**
 * DEV_IDENTITIES alone makes its first identity DEV_IDENTITY, the default: whatever keys on
 * DEV_IDENTITY (development mode's loopback-only rule, its warning, the authenticator) then
 * covers both settings.
 */
function withDevDefault(env: Env): Env {
  return env.DEV_IDENTITY || env.DEV_IDENTITIES.length === 0
    ? env
    : { ...env, DEV_IDENTITY: env.DEV_IDENTITIES[0] };
}

/**
 * Who development mode may act as, the default (DEV_IDENTITY) first, then the rest of
 * DEV_IDENTITIES in their order; empty outside development mode.
 */
export function devIdentities(config: Pick<Env, "DEV_IDENTITY" | "DEV_IDENTITIES">): string[] {
  const all = [config.DEV_IDENTITY ?? "", ...config.DEV_IDENTITIES].map((d) => d.toLowerCase());
  return [...new Set(all.filter((d) => d !== ""))];
}

/** BOOTSTRAP_ADMIN and GLOBAL_ADMINS, lower case: who acts as admin on every org and repo. */
export function globalAdminsOf(config: Pick<Env, "GLOBAL_ADMINS" | "BOOTSTRAP_ADMIN">): string[] {
  return [...config.GLOBAL_ADMINS, config.BOOTSTRAP_ADMIN ?? ""]
    .filter((a) => a !== "")
    .map((a) => a.toLowerCase());
}

/** Raised when the environment is invalid; its message names every bad variable. */
export class ConfigError extends Error {}

/** Validates `source` (normally `process.env`) and returns typed configuration, or throws ConfigError. */
export function loadConfig(source: Record<string, string | undefined> = process.env): Env {
  const parsed = envSchema.safeParse(source);
  if (parsed.success) return withDevDefault(parsed.data);
  const lines = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  // One problem is one line (what a terminal or a log shows first); several are listed under it.
  if (lines.length === 1) throw new ConfigError(`invalid configuration: ${lines[0]}`);
  throw new ConfigError(`invalid configuration:\n  ${lines.join("\n  ")}`);
}
