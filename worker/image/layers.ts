import { createReadStream } from "node:fs";
import { chmod, link, lstat, mkdir, open, readdir, readlink, rm, symlink } from "node:fs/promises";
import path from "node:path";
import zlib from "node:zlib";
import { extract, type Header } from "tar-stream";

/** A tar entry's body; drained (`resume`) when its bytes are not needed. */
type EntryBody = AsyncIterable<unknown> & { resume(): unknown };

/** A layer that cannot be applied safely (a path escaping the root, a link out of it, …). */
export class LayerError extends Error {
  override name = "LayerError";
}

/** What one image may unpack to, over all its layers (`SVC_CI_IMAGE_MAX_BYTES`, `…_MAX_ENTRIES`). */
export interface ImageLimits {
  maxBytes: number;
  maxEntries: number;
}

/**
 * 8 GiB and 500,000 entries: well above the big toolchain images (a CUDA or full TeX image is
 * 5 to 7 GB and 200,000 files), far below what fills a node's disk. Gzip expands a thousandfold
 * and zstd more, so a layer's download size says nothing about what it unpacks to.
 */
export const DEFAULT_IMAGE_LIMITS: ImageLimits = { maxBytes: 8 * 1024 ** 3, maxEntries: 500_000 };

/** One image's unpacking so far, against its limits; shared by all its layers, in order. */
export class UnpackBudget {
  readonly limits: ImageLimits;
  bytes = 0;
  entries = 0;

  constructor(limits: ImageLimits) {
    this.limits = limits;
  }

  /** Counts one tar entry and its content before anything of it is written. */
  take(name: string, contentBytes: number): void {
    this.entries += 1;
    if (this.entries > this.limits.maxEntries)
      throw new LayerError(
        `the image has more than ${this.limits.maxEntries} entries (SVC_CI_IMAGE_MAX_ENTRIES), at "${name}"`,
      );
    this.bytes += contentBytes;
    if (this.bytes > this.limits.maxBytes)
      throw new LayerError(
        `the image unpacks to more than ${this.limits.maxBytes} bytes (SVC_CI_IMAGE_MAX_BYTES), at "${name}"`,
      );
  }
}

const OPAQUE = ".wh..wh..opq";
const WHITEOUT = ".wh.";
const MAX_LINKS = 40;

/** The components of an entry name; `..` anywhere is refused (no legitimate layer needs it). */
function entryParts(name: string): string[] {
  const parts = name.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw new LayerError(`layer entry "${name}" escapes the root with ..`);
  return parts;
}

async function lstatOrNull(file: string) {
  try {
    return await lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Resolves a directory path inside `root` the way the kernel would inside the sandbox, where `root`
 * is `/`: symbolic links are followed but their targets are read relative to `root`, and `..` stops
 * at it. So a layer holding `etc -> /host-etc` and then `etc/passwd` writes `<root>/host-etc/passwd`,
 * never outside. Missing directories are created. Returns the path relative to `root`.
 */
async function resolveDirectory(root: string, parts: string[]): Promise<string[]> {
  const resolved: string[] = [];
  const queue = [...parts];
  let links = 0;
  while (queue.length > 0) {
    const part = queue.shift() as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      resolved.pop();
      continue;
    }
    const full = path.join(root, ...resolved, part);
    const stat = await lstatOrNull(full);
    if (!stat) {
      await mkdir(full, { mode: 0o755 });
    } else if (stat.isSymbolicLink()) {
      if (++links > MAX_LINKS) throw new LayerError(`too many symbolic links under /${parts.join("/")}`);
      const target = await readlink(full);
      if (target.startsWith("/")) resolved.length = 0;
      queue.unshift(...target.split("/"));
      continue;
    } else if (!stat.isDirectory()) {
      throw new LayerError(`/${[...resolved, part].join("/")} is not a directory`);
    }
    resolved.push(part);
  }
  return resolved;
}

/** The first bytes of a blob tell its compression, whatever the media type claims. */
async function decompressorFor(file: string): Promise<NodeJS.ReadWriteStream | null> {
  const handle = await open(file, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4), 0, 4, 0);
    if (bytesRead >= 2 && buffer[0] === 0x1f && buffer[1] === 0x8b) return zlib.createGunzip();
    if (bytesRead === 4 && buffer.readUInt32LE(0) === 0xfd2fb528) return zlib.createZstdDecompress();
    return null;
  } finally {
    await handle.close();
  }
}

interface LayerState {
  root: string;
  /** Paths (relative to the root) this layer wrote, and their ancestors: an opaque whiteout keeps them. */
  written: Set<string>;
  budget: UnpackBudget;
}

/**
 * Applies one layer (a tar, gzip- or zstd-compressed or not) onto the root filesystem, in order,
 * with the OCI whiteouts: `.wh.<name>` deletes `<name>` from the layers below, `.wh..wh..opq`
 * empties its directory of what the layers below put there. Device files and FIFOs are skipped
 * (the sandbox mounts its own /dev); ownership is not kept (everything belongs to the worker's
 * user, which is root inside the sandbox) and setuid/setgid bits are dropped. Every entry and its
 * content are counted against `budget` before they are written.
 */
export async function applyLayer(
  root: string,
  blobPath: string,
  budget = new UnpackBudget(DEFAULT_IMAGE_LIMITS),
): Promise<void> {
  const state: LayerState = { root, written: new Set(), budget };
  const decompressor = await decompressorFor(blobPath);
  const source = createReadStream(blobPath);
  const extractor = extract();
  const fail = (error: Error) => extractor.destroy(error);
  source.on("error", fail);
  decompressor?.on("error", fail);
  (decompressor ? source.pipe(decompressor) : source).pipe(extractor as unknown as NodeJS.WritableStream);
  try {
    for await (const entry of extractor) await applyEntry(state, entry.header, entry);
  } catch (error) {
    if (error instanceof LayerError) throw error;
    throw new LayerError(`layer cannot be unpacked: ${(error as Error).message}`);
  } finally {
    source.destroy();
  }
}

async function applyEntry(state: LayerState, header: Header, body: EntryBody): Promise<void> {
  const isFile = header.type === "file" || header.type === "contiguous-file";
  state.budget.take(header.name, isFile ? (header.size ?? 0) : 0);
  const parts = entryParts(header.name);
  const leaf = parts.pop();
  if (!leaf) return void body.resume(); // the root itself
  const parent = await resolveDirectory(state.root, parts);
  const parentPath = path.join(state.root, ...parent);

  if (leaf === OPAQUE) {
    await emptyDirectory(state, parent);
    return void body.resume();
  }
  if (leaf.startsWith(WHITEOUT)) {
    const name = leaf.slice(WHITEOUT.length);
    // `.wh...` would name the parent's parent: past the root, when the parent is the root.
    if (name === "" || name === "." || name === "..")
      throw new LayerError(`invalid whiteout "${header.name}"`);
    if (!name.startsWith(".wh.")) await rm(path.join(parentPath, name), { recursive: true, force: true });
    return void body.resume();
  }

  const target = path.join(parentPath, leaf);
  const existing = await lstatOrNull(target);
  const mode = (header.mode ?? 0o644) & 0o1777 & ~0o6000;
  markWritten(state, [...parent, leaf]);

  if (header.type === "directory") {
    if (existing && !existing.isDirectory()) await rm(target, { recursive: true, force: true });
    if (!existing?.isDirectory()) await mkdir(target);
    await chmod(target, mode | 0o700);
    return void body.resume();
  }
  if (existing) await rm(target, { recursive: true, force: true });

  switch (header.type) {
    case "file":
    case "contiguous-file":
      await writeEntry(target, body, mode & 0o777);
      return;
    case "symlink":
      await symlink(header.linkname ?? "", target);
      return void body.resume();
    case "link":
      await link(await hardLinkSource(state.root, header.linkname ?? ""), target);
      return void body.resume();
    default:
      return void body.resume();
  }
}

/** `wx` fails on anything already there, a symbolic link planted by an earlier entry included. */
async function writeEntry(target: string, body: EntryBody, mode: number): Promise<void> {
  const file = await open(target, "wx", 0o600);
  try {
    for await (const chunk of body) await file.write(chunk as Uint8Array);
    await file.chmod(mode);
  } finally {
    await file.close();
  }
}

/** A hard link's source must be a file already in the root, reached without leaving it. */
async function hardLinkSource(root: string, linkname: string): Promise<string> {
  const parts = entryParts(linkname);
  const leaf = parts.pop();
  if (!leaf) throw new LayerError(`hard link to the root directory`);
  const source = path.join(root, ...(await resolveDirectory(root, parts)), leaf);
  const stat = await lstatOrNull(source);
  if (!stat || stat.isDirectory()) throw new LayerError(`hard link to a missing file: ${linkname}`);
  return source;
}

function markWritten(state: LayerState, parts: string[]): void {
  for (let i = 1; i <= parts.length; i++) state.written.add(parts.slice(0, i).join("/"));
}

async function emptyDirectory(state: LayerState, directory: string[]): Promise<void> {
  const full = path.join(state.root, ...directory);
  const prefix = directory.length > 0 ? `${directory.join("/")}/` : "";
  for (const name of await readdir(full)) {
    const relative = `${prefix}${name}`;
    if (!state.written.has(relative)) await rm(path.join(full, name), { recursive: true, force: true });
  }
}
