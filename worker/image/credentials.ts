import { readFile } from "node:fs/promises";
import { z } from "zod";
import { DOCKER_HUB_REGISTRY } from "./reference.ts";

/** A user name and password for one registry (or an identity token as the password). */
export interface RegistryCredentials {
  username: string;
  password: string;
}

/** Looks up the credentials of a registry; undefined means pull anonymously. */
export type CredentialLookup = (registry: string) => RegistryCredentials | undefined;

// Docker's config.json holds much more (credHelpers, proxies, plugins); only `auths` matters here,
// so other keys pass through while the entries we read are checked.
const authEntry = z.object({
  auth: z.string().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  identitytoken: z.string().optional(),
});
const dockerConfig = z.looseObject({
  auths: z.record(z.string(), z.looseObject(authEntry.shape)).optional(),
});

/** `https://index.docker.io/v1/`, `http://host:5000/v2/` and `host:5000` all name `host:5000`. */
function registryOfKey(key: string): string {
  const host = key.replace(/^[a-z]+:\/\//, "").replace(/\/.*$/, "");
  return host === "index.docker.io" || host === "docker.io" ? DOCKER_HUB_REGISTRY : host;
}

function credentialsOf(entry: z.infer<typeof authEntry>): RegistryCredentials | undefined {
  if (entry.auth) {
    const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  if (entry.username && entry.password) return { username: entry.username, password: entry.password };
  // Docker stores an OAuth refresh token this way; registries take it as the password of `<token>`.
  if (entry.identitytoken) return { username: "<token>", password: entry.identitytoken };
  return undefined;
}

/**
 * Reads the `auths` of a Docker config file once. A missing path means anonymous pulls; a file that
 * cannot be read or parsed is an error the operator must see at start, not a silent anonymous pull.
 */
export async function loadDockerCredentials(path: string | undefined): Promise<CredentialLookup> {
  if (!path) return () => undefined;
  let parsed: z.infer<typeof dockerConfig>;
  try {
    parsed = dockerConfig.parse(JSON.parse(await readFile(path, "utf8")));
  } catch (error) {
    throw new Error(`cannot read the Docker config file ${path}: ${(error as Error).message}`);
  }
  const byRegistry = new Map<string, RegistryCredentials>();
  for (const [key, entry] of Object.entries(parsed.auths ?? {})) {
    const credentials = credentialsOf(authEntry.parse(entry));
    if (credentials) byRegistry.set(registryOfKey(key), credentials);
  }
  return (registry) => byRegistry.get(registry);
}
