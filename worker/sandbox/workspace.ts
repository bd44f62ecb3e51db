import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/** Where the job JWT is inside the sandbox, and the variables that name it (docs/ci-worker.md). */
export const TOKEN_DIRECTORY = "/run/quire";
export const TOKEN_PATH = `${TOKEN_DIRECTORY}/token`;
export const TOKEN_ENV = "QUIRE_JOB_TOKEN";
export const TOKEN_FILE_ENV = "QUIRE_JOB_TOKEN_FILE";

/**
 * The host side of one check's sandbox, in a fresh private directory beside the source (so the
 * source's parent must be writable: the worker unpacks each job into its own directory): the writable copy of the
 * source (mounted at /src; every step of the check sees the same one, no other check does), the
 * token directory (mounted read-only at /run/quire) and the /etc/hosts and /etc/resolv.conf the
 * check gets. Nothing else of the host is mounted.
 */
export interface Workspace {
  src: string;
  tokenDirectory: string;
  hosts: string;
  resolvConf: string;
  dispose(): Promise<void>;
}

const HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost\n";

export async function createWorkspace(input: {
  sourceDir: string;
  jobToken: string;
  network: "none" | "on";
}): Promise<Workspace> {
  // Beside the source: same file system (a fast copy), on the worker's work volume rather than a
  // possibly small /tmp, and removed with the job's directory if the worker dies before dispose.
  const root = await mkdtemp(path.join(path.dirname(path.resolve(input.sourceDir)), "check-"));
  try {
    const workspace: Workspace = {
      src: path.join(root, "src"),
      tokenDirectory: path.join(root, "run"),
      hosts: path.join(root, "hosts"),
      resolvConf: path.join(root, "resolv.conf"),
      dispose: () => rm(root, { recursive: true, force: true }),
    };
    // Links are copied as links (verbatim): the unpacker already refused any pointing outside /src.
    await cp(input.sourceDir, workspace.src, { recursive: true, verbatimSymlinks: true, errorOnExist: true });
    await mkdir(workspace.tokenDirectory, { mode: 0o755 });
    await writeFile(path.join(workspace.tokenDirectory, "token"), input.jobToken, { mode: 0o444 });
    await writeFile(workspace.hosts, HOSTS);
    // With the network on, name resolution works as on the node; off, there is nothing to resolve.
    const resolv = input.network === "on" ? await readFile("/etc/resolv.conf", "utf8").catch(() => "") : "";
    await writeFile(workspace.resolvConf, resolv);
    return workspace;
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}
