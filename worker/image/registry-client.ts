import { isIP } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { CredentialLookup, RegistryCredentials } from "./credentials.ts";

const RETRY_DELAYS_MS = [500, 1000];

/** The registry refused, failed or answered something the worker cannot use. */
export class RegistryError extends Error {
  override name = "RegistryError";
}

export interface RegistryClientOptions {
  /** `host:port` registries that may be reached over plain HTTP (loopback addresses only). */
  insecureRegistries: string[];
  credentials: CredentialLookup;
}

/** True for `localhost`, 127.0.0.0/8 and ::1, the only hosts plain HTTP is allowed to. */
function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1";
  return false;
}

function hostOf(registry: string): string {
  return registry.startsWith("[")
    ? registry.slice(0, registry.indexOf("]") + 1)
    : registry.replace(/:\d+$/, "");
}

/**
 * The base URL of a registry's API. Plain HTTP needs both the operator's say-so (the registry is in
 * `insecureRegistries`) and a loopback address: a registry elsewhere over HTTP could be answered by
 * anyone on the path, and the digest check would then be all that stands between a check and an
 * attacker's image.
 */
export function registryBaseUrl(registry: string, insecureRegistries: string[]): string {
  if (!insecureRegistries.includes(registry)) return `https://${registry}`;
  if (!isLoopbackHost(hostOf(registry))) {
    throw new RegistryError(
      `registry ${registry} is listed as insecure but is not a loopback address; plain HTTP is allowed only to 127.0.0.1, ::1 or localhost`,
    );
  }
  return `http://${registry}`;
}

/** The parameters of one `WWW-Authenticate` challenge, e.g. `Bearer realm="…",service="…"`. */
export function parseChallenge(header: string): { scheme: string; params: Record<string, string> } {
  const space = header.indexOf(" ");
  const scheme = (space === -1 ? header : header.slice(0, space)).toLowerCase();
  const params: Record<string, string> = {};
  const pattern = /([A-Za-z_][A-Za-z0-9_-]*)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g;
  for (const match of (space === -1 ? "" : header.slice(space + 1)).matchAll(pattern)) {
    const key = match[1];
    if (key) params[key.toLowerCase()] = match[2]?.replace(/\\(.)/g, "$1") ?? match[3] ?? "";
  }
  return { scheme, params };
}

function basic(credentials: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
}

/**
 * A client for one repository of one registry, speaking the distribution API's auth dance: try
 * anonymously; on 401 follow the challenge (Basic: send the configured credentials; Bearer: fetch a
 * token from the realm with the credentials if any, else anonymously) and retry once. The token is
 * kept for the following requests of the same pull.
 */
export class RegistryClient {
  readonly #base: string;
  readonly #registry: string;
  readonly #repository: string;
  readonly #options: RegistryClientOptions;
  #authorization: string | undefined;

  constructor(registry: string, repository: string, options: RegistryClientOptions) {
    this.#registry = registry;
    this.#repository = repository;
    this.#options = options;
    this.#base = registryBaseUrl(registry, options.insecureRegistries);
  }

  /** GET `/v2/<repository>/<kind>/<reference>`, authenticating when challenged. */
  async get(kind: "manifests" | "blobs", reference: string, accept?: string[]): Promise<Response> {
    const url = `${this.#base}/v2/${this.#repository}/${kind}/${reference}`;
    const headers: Record<string, string> = {};
    if (accept) headers.accept = accept.join(", ");
    let response = await this.#fetchWithRetries(url, headers);
    if (response.status === 401) {
      await response.body?.cancel();
      this.#authorization = await this.#answerChallenge(response.headers.get("www-authenticate"));
      response = await this.#fetchWithRetries(url, headers);
    }
    if (!response.ok) {
      await response.body?.cancel();
      const what = `${this.#registry}/${this.#repository} ${kind.slice(0, -1)} ${reference}`;
      if (response.status === 401 || response.status === 403) {
        throw new RegistryError(
          `${what}: access denied (${response.status}); check the Docker config credentials`,
        );
      }
      if (response.status === 404) throw new RegistryError(`${what}: not found`);
      throw new RegistryError(`${what}: the registry answered ${response.status}`);
    }
    return response;
  }

  /**
   * Registries and the storage behind them have bad seconds: a refused connection, a 429 or a
   * 5xx is tried again twice, after 0.5 s and 1 s, before it fails the check.
   */
  async #fetchWithRetries(url: string, headers: Record<string, string>): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const last = attempt === RETRY_DELAYS_MS.length + 1;
      const delay = RETRY_DELAYS_MS[attempt - 1] ?? 0;
      let response: Response;
      try {
        response = await this.#fetch(url, headers);
      } catch (error) {
        if (last) throw error;
        await sleep(delay);
        continue;
      }
      if (last || (response.status !== 429 && response.status < 500)) return response;
      await response.body?.cancel();
      await sleep(delay);
    }
  }

  async #fetch(url: string, headers: Record<string, string>): Promise<Response> {
    const all = this.#authorization ? { ...headers, authorization: this.#authorization } : headers;
    try {
      return await fetch(url, { headers: all, redirect: "follow" });
    } catch (error) {
      throw new RegistryError(`cannot reach registry ${this.#registry}: ${(error as Error).cause ?? error}`);
    }
  }

  async #answerChallenge(header: string | null): Promise<string> {
    const credentials = this.#options.credentials(this.#registry);
    if (!header) throw new RegistryError(`registry ${this.#registry} answered 401 without a challenge`);
    const { scheme, params } = parseChallenge(header);
    if (scheme === "basic") {
      if (!credentials) {
        throw new RegistryError(
          `registry ${this.#registry} needs credentials; add them to the Docker config file`,
        );
      }
      return basic(credentials);
    }
    if (scheme !== "bearer" || !params.realm) {
      throw new RegistryError(`registry ${this.#registry} sent an unsupported challenge: ${header}`);
    }
    return `Bearer ${await this.#fetchToken(params, credentials)}`;
  }

  async #fetchToken(
    params: Record<string, string>,
    credentials: RegistryCredentials | undefined,
  ): Promise<string> {
    let realm: URL;
    try {
      realm = new URL(params.realm ?? "");
    } catch {
      throw new RegistryError(`registry ${this.#registry} sent an invalid token realm`);
    }
    // Credentials go over TLS, or over plain HTTP only to loopback (the tests' token servers).
    if (realm.protocol !== "https:" && !(realm.protocol === "http:" && isLoopbackHost(realm.hostname))) {
      throw new RegistryError(
        `registry ${this.#registry} sent a token realm that is not https: ${realm.origin}`,
      );
    }
    if (params.service) realm.searchParams.set("service", params.service);
    realm.searchParams.set("scope", params.scope ?? `repository:${this.#repository}:pull`);
    const headers: Record<string, string> = credentials ? { authorization: basic(credentials) } : {};
    let response: Response;
    try {
      response = await fetch(realm, { headers });
    } catch (error) {
      throw new RegistryError(
        `cannot reach the token service ${realm.origin}: ${(error as Error).cause ?? error}`,
      );
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new RegistryError(`the token service of ${this.#registry} refused (${response.status})`);
    }
    const body = (await response.json().catch(() => ({}))) as { token?: unknown; access_token?: unknown };
    const token = typeof body.token === "string" ? body.token : body.access_token;
    if (typeof token !== "string" || token.length === 0) {
      throw new RegistryError(`the token service of ${this.#registry} answered without a token`);
    }
    return token;
  }
}
