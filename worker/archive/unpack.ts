import { constants } from "node:fs";
import { link, lstat, mkdir, open, symlink } from "node:fs/promises";
import path from "node:path";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract, type Header as Headers } from "tar-stream";

/**
 * Unpacks a repo archive (`.tar.gz`, one top folder; docs/archives.md) into a directory, treating
 * it as hostile: the bytes come over the network, and the directory becomes a check's `/src`.
 *
 * Refused, each with an ArchiveRefused naming the entry and the reason:
 * - absolute names and names with a `..` segment, or outside the one top folder;
 * - symbolic links whose target is absolute, or leaves the source folder when followed through the
 *   other links of the archive (as realpath would), or loops; hard links to anything but a regular
 *   file unpacked earlier;
 * - any entry under a symbolic link unpacked earlier, or one that would replace an existing path
 *   (both are ways to write through a link to outside);
 * - devices, fifos and every other special type;
 * - more than `maxFiles` entries or `maxBytes` of content.
 * Files are created with O_EXCL|O_NOFOLLOW and modes 0644/0755 (no setuid, no world-writable).
 */

export interface UnpackLimits {
  maxBytes: number;
  maxFiles: number;
}

export interface UnpackStats {
  files: number;
  bytes: number;
}

/** The archive may not be unpacked; `message` is what the check's log says. */
export class ArchiveRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArchiveRefused";
  }
}

const MAX_PATH_LENGTH = 4096;
/** As the kernel's limit on links followed in one lookup (ELOOP). */
const MAX_LINK_HOPS = 40;

/** Unpacks the gzipped tar `source` into `dest` (an empty directory that exists). */
export async function unpackArchive(
  source: Readable | AsyncIterable<Uint8Array>,
  dest: string,
  limits: UnpackLimits,
): Promise<UnpackStats> {
  const state = new Unpacker(dest, limits);
  const tar = extract();
  const input = source instanceof Readable ? source : Readable.from(source);
  const done = (async () => {
    for await (const entry of tar) {
      try {
        await state.entry(entry.header, entry as unknown as Readable);
      } finally {
        // Drain whatever the handler did not read, so the extractor can go on (or stop cleanly).
        entry.resume();
      }
    }
    state.verifyLinks();
  })().catch((err: unknown) => {
    // Stop reading at once: the rest of a refused archive is not wanted.
    tar.destroy();
    input.destroy();
    throw unreadable(err);
  });
  const [piped, walked] = await Promise.allSettled([
    pipeline(input, createGunzip(), tar as unknown as Writable),
    done,
  ]);
  // The walk's reason first: when it refuses an entry, the pipeline then fails only as a consequence.
  if (walked.status === "rejected") throw walked.reason;
  if (piped.status === "rejected") throw unreadable(piped.reason);
  return { files: state.files, bytes: state.bytes };
}

class Unpacker {
  files = 0;
  bytes = 0;
  #top: string | undefined;
  /** The symbolic links made so far: path (relative, posix) → target and entry name. */
  #links = new Map<string, { to: string; name: string }>();
  readonly #dest: string;
  readonly #limits: UnpackLimits;

  constructor(dest: string, limits: UnpackLimits) {
    this.#dest = dest;
    this.#limits = limits;
  }

  async entry(header: Headers, body: Readable): Promise<void> {
    const rel = this.#relative(header.name);
    if (rel === "") {
      if (header.type !== "directory") throw refuse(header.name, "is not under the archive's top folder");
      return;
    }
    this.files += 1;
    if (this.files > this.#limits.maxFiles)
      throw new ArchiveRefused(`the archive has more than ${this.#limits.maxFiles} entries`);
    this.#notThroughLink(header.name, rel);
    const target = path.join(this.#dest, rel);
    switch (header.type) {
      case "directory":
        await this.#directory(header.name, target);
        return;
      case "file":
      case "contiguous-file":
        await this.#file(header, target, body);
        return;
      case "symlink":
        await this.#symlink(header, rel, target);
        return;
      case "link":
        await this.#hardlink(header, target);
        return;
      default:
        throw refuse(
          header.name,
          `is a ${describeType(header.type)}, which a source archive may not contain`,
        );
    }
  }

  /** The entry's path below the top folder, checked; "" for the top folder itself. */
  #relative(name: string): string {
    if (name.length > MAX_PATH_LENGTH)
      throw refuse(name.slice(0, 80), `has a name longer than ${MAX_PATH_LENGTH} characters`);
    if (name.includes("\0")) throw refuse(name, "has a NUL character in its name");
    if (name.startsWith("/")) throw refuse(name, "is an absolute path");
    const segments = name.split("/").filter((s) => s !== "" && s !== ".");
    if (segments.includes(".."))
      throw refuse(name, "has a '..' segment, which would leave the source folder");
    const [top, ...rest] = segments;
    if (top === undefined) throw refuse(name, "has an empty name");
    this.#top ??= top;
    if (top !== this.#top) throw refuse(name, `is not under the archive's top folder ${this.#top}/`);
    return rest.join("/");
  }

  /** Writing below a symbolic link would follow it; nothing in an archive needs that. */
  #notThroughLink(name: string, rel: string): void {
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      if (this.#links.has(prefix)) throw refuse(name, `is below the symbolic link ${prefix}`);
    }
  }

  async #directory(name: string, target: string): Promise<void> {
    const existing = await lstat(target).catch(() => undefined);
    if (existing && !existing.isDirectory())
      throw refuse(name, "replaces an earlier entry that is not a folder");
    await mkdir(target, { recursive: true, mode: 0o755 });
  }

  async #file(header: Headers, target: string, body: Readable): Promise<void> {
    const size = header.size ?? 0;
    this.#count(header.name, size);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
    const mode = (header.mode ?? 0o644) & 0o111 ? 0o755 : 0o644;
    let file: Awaited<ReturnType<typeof open>>;
    try {
      // O_EXCL: never replace (or write through) an earlier entry; O_NOFOLLOW for good measure.
      file = await open(
        target,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        mode,
      );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST")
        throw refuse(header.name, "appears twice in the archive");
      throw err;
    }
    let written = 0;
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        written += chunk.length;
        if (written > size) throw refuse(header.name, "holds more bytes than its header says");
        await file.write(chunk);
      }
    } finally {
      await file.close();
    }
  }

  async #symlink(header: Headers, rel: string, target: string): Promise<void> {
    const to = header.linkname ?? "";
    if (to === "") throw refuse(header.name, "is a symbolic link with no target");
    if (to.startsWith("/"))
      throw refuse(header.name, `is a symbolic link to the absolute path ${to}, outside /src`);
    // Counted before it is checked, so a link that reaches itself is seen as the loop it is.
    this.#links.set(rel, { to, name: header.name });
    this.#checkLink(rel);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
    try {
      await symlink(to, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST")
        throw refuse(header.name, "appears twice in the archive");
      throw err;
    }
  }

  /**
   * Refuses a link that, followed as the kernel would (through the links unpacked so far, `..`
   * taken after each link is replaced by its target), leaves the root or never ends. The lexical
   * rule is not enough: with `sub/up -> ..`, the link `sub/up2 -> up/..` reads as `sub` but leads
   * to the root's parent.
   */
  #checkLink(rel: string): void {
    const link = this.#links.get(rel);
    if (!link) return;
    const outcome = this.#resolve(rel.split("/").slice(0, -1), link.to);
    if (outcome === "outside")
      throw refuse(link.name, `is a symbolic link to ${link.to}, which points outside /src`);
    if (outcome === "loop")
      throw refuse(
        link.name,
        `is a symbolic link to ${link.to}, which goes through more than ${MAX_LINK_HOPS} links (a loop)`,
      );
  }

  /** Where `target`, read in the folder `from`, leads: its path from the root, or why it leads nowhere. */
  #resolve(from: string[], target: string): string[] | "outside" | "loop" {
    const resolved = [...from];
    const queue = target.split("/");
    let hops = 0;
    while (queue.length > 0) {
      const part = queue.shift() as string;
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (resolved.length === 0) return "outside";
        resolved.pop();
        continue;
      }
      resolved.push(part);
      const link = this.#links.get(resolved.join("/"));
      if (!link) continue;
      if (++hops > MAX_LINK_HOPS) return "loop";
      // Targets are relative (absolute ones were refused), read in the link's own folder.
      resolved.pop();
      queue.unshift(...link.to.split("/"));
    }
    return resolved;
  }

  /**
   * Checks every link again once all are unpacked: a later link can change where an earlier one
   * leads (`sub/x -> d/..` is `sub` until `sub/d -> ..` arrives, then it is the root's parent).
   */
  verifyLinks(): void {
    for (const rel of this.#links.keys()) this.#checkLink(rel);
  }

  async #hardlink(header: Headers, target: string): Promise<void> {
    const to = header.linkname ?? "";
    if (to.startsWith("/"))
      throw refuse(header.name, `is a hard link to the absolute path ${to}, outside /src`);
    let from: string;
    try {
      from = this.#relative(to);
    } catch {
      throw refuse(header.name, `is a hard link to ${to}, which is outside /src`);
    }
    this.#notThroughLink(header.name, from);
    const source = path.join(this.#dest, from);
    const stat = await lstat(source).catch(() => undefined);
    if (!stat?.isFile())
      throw refuse(header.name, `is a hard link to ${to}, which is not a file unpacked before it`);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
    try {
      await link(source, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST")
        throw refuse(header.name, "appears twice in the archive");
      throw err;
    }
  }

  #count(name: string, size: number): void {
    this.bytes += size;
    if (this.bytes > this.#limits.maxBytes)
      throw new ArchiveRefused(
        `the archive unpacks to more than ${this.#limits.maxBytes} bytes (at ${name})`,
      );
  }
}

/** A gzip or tar format error is the archive's fault; a file-system error (it has a syscall) is ours. */
function unreadable(err: unknown): unknown {
  if (err instanceof ArchiveRefused || (err as NodeJS.ErrnoException).syscall) return err;
  return new ArchiveRefused(`the archive could not be read as a .tar.gz: ${(err as Error).message}`);
}

function refuse(name: string, why: string): ArchiveRefused {
  return new ArchiveRefused(`archive entry ${JSON.stringify(name)} ${why}`);
}

function describeType(type: Headers["type"]): string {
  switch (type) {
    case "character-device":
      return "character device";
    case "block-device":
      return "block device";
    case "fifo":
      return "fifo (named pipe)";
    default:
      return `${type ?? "unknown"} entry`;
  }
}
