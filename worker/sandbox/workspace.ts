import { randomInt } from "node:crypto";
import { cp, lstat, mkdir, readdir, readFile, readlink, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

/** Where the job JWT is inside the sandbox, and the variables that name it (docs/ci-worker.md). */
export const TOKEN_DIRECTORY = "/run/quire";
export const TOKEN_PATH = `${TOKEN_DIRECTORY}/token`;
export const TOKEN_ENV = "QUIRE_JOB_TOKEN";
export const TOKEN_FILE_ENV = "QUIRE_JOB_TOKEN_FILE";

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
 * (`.XXXXXX.quire-check`) names the process that made it, so that copies left by a process killed
 * outright can be told from live ones and from anything else in the directory.
 */
export interface Workspace {
  /** The host directory mounted at /src. */
  src: string;
  token: string;
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
  network: "none" | "on";
}): Promise<Workspace> {
  const { src, marker } = await makeCopyDirectory(path.resolve(input.stagingDir));
  const dispose = async () => {
    await rm(src, { recursive: true, force: true });
    // Last: while the marker is there, a worker started after a crash knows the copy is ours.
    await rm(marker, { force: true });
  };
  try {
    // Links are copied as links (verbatim): the unpacker already refused any pointing outside /src.
    await cp(input.sourceDir, src, { recursive: true, verbatimSymlinks: true, errorOnExist: true });
    // With the network on, name resolution works as on the node; off, there is nothing to resolve.
    const resolvConf =
      input.network === "on" ? await readFile("/etc/resolv.conf", "utf8").catch(() => "") : "";
    return { src, token: input.jobToken, hosts: HOSTS, resolvConf, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/**
 * Who made a copy, in its marker `.<name>.quire-check` beside it (outside the copy: the marker is
 * not mounted, and a step cannot forge or remove it). A copy whose process is gone is stale.
 */
interface Owner {
  pid: number;
  /** The process's start time in clock ticks after boot: a reused pid has another. */
  start: string;
  /** The boot and the pid namespace the pid belongs to: outside them it means nothing. */
  boot: string;
  pidNamespace: string;
  createdAt: number;
}

const NAME = /^[A-Za-z0-9]{6}$/;
const MARKER = /^\.([A-Za-z0-9]{6})\.quire-check$/;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function markerOf(stagingDir: string, name: string): string {
  return path.join(stagingDir, `.${name}.quire-check`);
}

/**
 * A fresh directory with a random six-character name, its marker written first: a process killed
 * at any point leaves nothing unmarked behind (at worst a marker alone, removed the same way).
 */
async function makeCopyDirectory(stagingDir: string): Promise<{ src: string; marker: string }> {
  const owner = JSON.stringify(await currentOwner());
  for (let attempt = 0; ; attempt++) {
    const name = Array.from({ length: 6 }, () => ALPHABET[randomInt(ALPHABET.length)]).join("");
    const marker = markerOf(stagingDir, name);
    const src = path.join(stagingDir, name);
    try {
      await writeFile(marker, owner, { flag: "wx", mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && attempt < 10) continue;
      throw error;
    }
    try {
      await mkdir(src, { mode: 0o700 });
      return { src, marker };
    } catch (error) {
      await rm(marker, { force: true });
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && attempt < 10) continue;
      throw error;
    }
  }
}

async function currentOwner(): Promise<Owner> {
  return {
    pid: process.pid,
    start: await processStart(process.pid),
    boot: await readFile("/proc/sys/kernel/random/boot_id", "utf8").then(
      (s) => s.trim(),
      () => "",
    ),
    pidNamespace: await readlink("/proc/self/ns/pid").catch(() => ""),
    createdAt: Date.now(),
  };
}

/** Field 22 of /proc/<pid>/stat, after the command name (which may hold spaces and parentheses). */
async function processStart(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
}

/**
 * Removes the copies a killed worker (or `quire ci run --local`) left in `stagingDir`: only those
 * with our marker, made by our user, and either from a process of this machine's boot and pid
 * namespace that is no longer running, or, when the owner cannot be checked from here (another
 * container sharing the directory, a marker half written), older than `olderThanMs`. Anything
 * else in the directory is never touched. Returns the names removed.
 */
export async function removeStaleWorkspaces(stagingDir: string, olderThanMs: number): Promise<string[]> {
  const directory = path.resolve(stagingDir);
  const entries = await readdir(directory).catch(() => [] as string[]);
  const here = await currentOwner();
  const removed: string[] = [];
  for (const entry of entries) {
    const name = MARKER.exec(entry)?.[1];
    if (!name || !NAME.test(name)) continue;
    const marker = markerOf(directory, name);
    const stat = await lstat(marker).catch(() => null);
    // In a shared /tmp another user could plant a marker beside one of our directories.
    if (!stat?.isFile() || stat.uid !== process.getuid?.()) continue;
    const owner = await readFile(marker, "utf8").then(parseOwner, () => null);
    if (!(await isStale(owner, stat.mtimeMs, here, olderThanMs))) continue;
    const src = path.join(directory, name);
    const copy = await lstat(src).catch(() => null);
    if (copy?.isDirectory() && copy.uid === stat.uid) await rm(src, { recursive: true, force: true });
    await unlink(marker).catch(() => {});
    removed.push(name);
  }
  return removed;
}

function parseOwner(text: string): Owner | null {
  try {
    const value = JSON.parse(text) as Partial<Owner>;
    if (typeof value.pid !== "number" || typeof value.start !== "string") return null;
    if (typeof value.boot !== "string" || typeof value.pidNamespace !== "string") return null;
    if (typeof value.createdAt !== "number") return null;
    return value as Owner;
  } catch {
    return null;
  }
}

async function isStale(
  owner: Owner | null,
  markerTime: number,
  here: Owner,
  olderThanMs: number,
): Promise<boolean> {
  // An owner whose /proc could not be read is never judged by it: "" would equal "" forever.
  const checkable =
    owner !== null &&
    owner.start !== "" &&
    here.boot !== "" &&
    here.pidNamespace !== "" &&
    owner.boot === here.boot &&
    owner.pidNamespace === here.pidNamespace;
  if (checkable) return (await processStart(owner.pid)) !== owner.start;
  return Date.now() - (owner?.createdAt ?? markerTime) > olderThanMs;
}
