import { cp, readFile } from "node:fs/promises";
import path from "node:path";
import type { SecretFile } from "../check/types.ts";
import { createOwnedDirectory } from "../owned-directory.ts";

/** Where the job JWT is inside the sandbox, and the variables that name it (docs/ci-worker.md). */
export const TOKEN_DIRECTORY = "/run/quire";
export const TOKEN_PATH = `${TOKEN_DIRECTORY}/token`;
export const TOKEN_ENV = "QUIRE_JOB_TOKEN";
export const TOKEN_FILE_ENV = "QUIRE_JOB_TOKEN_FILE";
/** Where the repo secrets a check lists are, one read-only file per name (docs/secrets.md). */
export const SECRETS_DIRECTORY = "/run/secrets";

/**
 * What one check's sandbox is given besides its image: the writable copy of the source (mounted
 * at /src; every step of the check sees the same one, no other check does), and the contents of
 * /run/quire/token, /etc/hosts and /etc/resolv.conf, which bubblewrap writes into its own tmpfs
 * (`--ro-bind-data`), so that no host file stands behind them.
 *
 * A step can read every mount's source in /proc/self/mountinfo: the kernel shows a bind mount's
 * host directory as its path from the root of its file system, and no bind can rename it. So the
 * copy lives in a directory of its own directly in the staging directory, with a random name that
 * says nothing (`XXXXXX`), not in the job's folder (`quire-job-…/check-…`). Its marker beside it
 * (worker/owned-directory.ts) lets the next worker remove it if this one is killed outright.
 */
export interface Workspace {
  /** The host directory mounted at /src. */
  src: string;
  token: string;
  /** The repo secrets of the check, written like the token into bwrap's tmpfs. */
  secrets: readonly SecretFile[];
  hosts: string;
  resolvConf: string;
  dispose(): Promise<void>;
}

const HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost\n";

export async function createWorkspace(input: {
  sourceDir: string;
  /** Where the copy goes: the worker's work directory (a fast copy on the same volume). */
  stagingDir: string;
  jobToken: string;
  secrets?: readonly SecretFile[] | undefined;
  network: "none" | "on";
}): Promise<Workspace> {
  const { path: src, remove: dispose } = await createOwnedDirectory(path.resolve(input.stagingDir));
  try {
    // Links are copied as links (verbatim): the unpacker already refused any pointing outside /src.
    await cp(input.sourceDir, src, { recursive: true, verbatimSymlinks: true, errorOnExist: true });
    // With the network on, name resolution works as on the node; off, there is nothing to resolve.
    const resolvConf =
      input.network === "on" ? await readFile("/etc/resolv.conf", "utf8").catch(() => "") : "";
    return { src, token: input.jobToken, secrets: input.secrets ?? [], hosts: HOSTS, resolvConf, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}
