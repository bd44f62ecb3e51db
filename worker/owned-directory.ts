import { randomInt } from "node:crypto";
import { lstat, mkdir, readdir, readFile, readlink, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * The directories the worker makes in its work directory (each job's `quire-job-XXXXXX`, each
 * check's copy of the source `XXXXXX`) and `quire ci run --local` in the temporary one: a process
 * killed outright leaves them behind, and the work directory may be the system's /tmp, shared
 * with other programs and users. So each has a marker beside it, `.<name>.quire-owner`, written
 * before the directory is made and removed after it, naming the process that made it; the next
 * start removes the directories whose process is gone (`removeStaleDirectories`), and nothing
 * without such a marker. The marker is outside the directory: a step never sees it.
 */
export interface OwnedDirectory {
  path: string;
  /** Removes the directory, then its marker. */
  remove(): Promise<void>;
}

interface Owner {
  pid: number;
  /** The process's start time in clock ticks after boot: a reused pid has another. */
  start: string;
  /** The boot and the pid namespace the pid belongs to: outside them it means nothing. */
  boot: string;
  pidNamespace: string;
  createdAt: number;
}

/** The names we make: an optional known prefix and six random letters or digits. */
const PREFIXES = ["", "quire-job-"] as const;
const MARKER = /^\.((?:quire-job-)?[A-Za-z0-9]{6})\.quire-owner$/;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function markerOf(parent: string, name: string): string {
  return path.join(parent, `.${name}.quire-owner`);
}

/**
 * A fresh private directory `<parent>/<prefix><six random characters>`, its marker written first:
 * a process killed at any point leaves nothing unmarked (at worst a marker alone, removed the same
 * way).
 */
export async function createOwnedDirectory(
  parent: string,
  prefix: (typeof PREFIXES)[number] = "",
): Promise<OwnedDirectory> {
  const owner = JSON.stringify(await currentOwner());
  for (let attempt = 0; ; attempt++) {
    const random = Array.from({ length: 6 }, () => ALPHABET[randomInt(ALPHABET.length)]).join("");
    const name = `${prefix}${random}`;
    const marker = markerOf(parent, name);
    const directory = path.join(parent, name);
    try {
      await writeFile(marker, owner, { flag: "wx", mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && attempt < 10) continue;
      throw error;
    }
    try {
      await mkdir(directory, { mode: 0o700 });
    } catch (error) {
      await rm(marker, { force: true });
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && attempt < 10) continue;
      throw error;
    }
    return {
      path: directory,
      remove: async () => {
        await rm(directory, { recursive: true, force: true });
        // Last: while the marker is there, a process started after a crash knows the directory.
        await rm(marker, { force: true });
      },
    };
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
 * Removes the directories a killed worker (or `quire ci run --local`) left in `parent`: only those
 * with our marker, made by our user, and either from a process of this machine's boot and pid
 * namespace that is no longer running, or, when the owner cannot be checked from here (another
 * container sharing the directory, a marker half written), older than `olderThanMs`. Anything
 * else in the directory is never touched. Returns the names removed.
 */
export async function removeStaleDirectories(parent: string, olderThanMs: number): Promise<string[]> {
  const directory = path.resolve(parent);
  const entries = await readdir(directory).catch(() => [] as string[]);
  const here = await currentOwner();
  const removed: string[] = [];
  for (const entry of entries) {
    const name = MARKER.exec(entry)?.[1];
    if (!name) continue;
    const marker = markerOf(directory, name);
    const stat = await lstat(marker).catch(() => null);
    // In a shared /tmp another user could plant a marker beside one of our directories.
    if (!stat?.isFile() || stat.uid !== process.getuid?.()) continue;
    const owner = await readFile(marker, "utf8").then(parseOwner, () => null);
    if (!(await isStale(owner, stat.mtimeMs, here, olderThanMs))) continue;
    // A link in its place (leading who knows where) is left alone; only its marker goes.
    const owned = path.join(directory, name);
    const found = await lstat(owned).catch(() => null);
    if (found?.isDirectory() && found.uid === stat.uid) await rm(owned, { recursive: true, force: true });
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
