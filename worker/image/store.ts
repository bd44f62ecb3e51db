import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { link, lstat, mkdir, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createOwnedDirectory } from "../owned-directory.ts";
import type { CredentialLookup } from "./credentials.ts";
import { applyLayer, DEFAULT_IMAGE_LIMITS, type ImageLimits, UnpackBudget } from "./layers.ts";
import {
  type Descriptor,
  type ImageConfig,
  MANIFEST_ACCEPT,
  ManifestError,
  parseImageConfig,
  parseManifest,
  pickPlatform,
} from "./manifest.ts";
import { formatImageReference, parseImageReference } from "./reference.ts";
import { RegistryClient, RegistryError } from "./registry-client.ts";

/** A pulled image, ready for the sandbox. */
export interface PulledImage {
  /** The digest of the image manifest (for an index, of the linux/amd64 manifest it names). */
  digest: string;
  /** The root filesystem, to be mounted read-only. Never write to it. */
  rootfs: string;
  /** The image's `Env` (`KEY=value`), the defaults the steps start from. */
  env: string[];
  /** True when the root filesystem came from the cache and no blob was fetched. */
  cached: boolean;
}

export interface ImageStoreOptions {
  cacheDir: string;
  insecureRegistries: string[];
  credentials: CredentialLookup;
  /** What one image may unpack to; DEFAULT_IMAGE_LIMITS when not given. */
  limits?: ImageLimits;
}

/**
 * Layers are downloaded all at once, each to a file of its own: a manifest of thousands of empty
 * layers would open as many connections and files without touching the byte or entry limits.
 * Docker itself stops at 127 layers.
 */
const MAX_LAYERS = 256;

/** Manifests are small; anything bigger is a registry misbehaving. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/**
 * Mount points the sandbox needs in every root filesystem: bubblewrap binds onto the read-only
 * root, so each must exist there beforehand (an image without /tmp still gets one).
 */
const MOUNT_DIRECTORIES = ["src", "tmp", "proc", "dev", "run/quire", "run/secrets", "etc"];
const MOUNT_FILES = ["etc/hosts", "etc/resolv.conf"];

/** The random names of the cached trees under `<cacheDir>/r/`. */
const TREE_NAME = /^[0-9a-f]{16}$/;

function sha256(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/**
 * Pulls images over the OCI distribution API into root filesystems cached by manifest digest. Every
 * manifest and blob is checked against its digest before use.
 *
 * A step reads its root filesystem's host path in /proc/self/mountinfo (the kernel shows a bind
 * mount's source as its path on its file system), so each tree lives under a random name that says
 * nothing, `<cacheDir>/r/<16 hex>`, and the digest leads to it through an index file beside it,
 * `<cacheDir>/images/sha256-<hex>.json`. A tree is unpacked in `<cacheDir>/tmp/`, renamed to its
 * random name, and only then indexed, with a hard link that fails if the index exists: a crash
 * leaves at worst an unindexed tree, never a half one reachable, and of two worker processes
 * pulling one image into one cache the first to index wins and the other drops its own tree.
 * Concurrent pulls of one image in this process share one.
 */
export class ImageStore {
  readonly #options: ImageStoreOptions;
  readonly #inFlight = new Map<string, Promise<PulledImage>>();

  constructor(options: ImageStoreOptions) {
    this.#options = options;
  }

  async pull(image: string): Promise<PulledImage> {
    const ref = parseImageReference(image);
    // A reference pinned to an image manifest already unpacked needs no registry at all.
    if (ref.digest) {
      const cached = await this.#lookup(ref.digest);
      if (cached) return cached;
    }
    const client = new RegistryClient(ref.registry, ref.repository, this.#options);
    const { descriptorDigest, manifest } = await this.#resolve(
      client,
      ref.digest ?? ref.tag ?? "latest",
      ref.digest,
    );
    const cached = await this.#lookup(descriptorDigest);
    if (cached) return cached;
    let pending = this.#inFlight.get(descriptorDigest);
    if (!pending) {
      pending = this.#unpack(client, descriptorDigest, manifest).finally(() =>
        this.#inFlight.delete(descriptorDigest),
      );
      this.#inFlight.set(descriptorDigest, pending);
    }
    try {
      return await pending;
    } catch (error) {
      if (error instanceof RegistryError || error instanceof ManifestError) throw error;
      throw new RegistryError(`${formatImageReference(ref)}: ${(error as Error).message}`);
    }
  }

  #indexFile(digest: string): string {
    return path.join(this.#options.cacheDir, "images", `${digest.replace(":", "-")}.json`);
  }

  #treeDir(name: string): string {
    return path.join(this.#options.cacheDir, "r", name);
  }

  /** The cached image of this digest, or null when none is indexed. */
  async #lookup(digest: string): Promise<PulledImage | null> {
    const text = await readFile(this.#indexFile(digest), "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return null;
      throw error;
    });
    if (text === null) return null;
    const index = JSON.parse(text) as { rootfs: unknown; env: string[] };
    // The name is joined to a path: anything but our own random names is a damaged cache.
    if (typeof index.rootfs !== "string" || !TREE_NAME.test(index.rootfs))
      throw new Error(`the image cache's index ${this.#indexFile(digest)} is damaged`);
    const rootfs = this.#treeDir(index.rootfs);
    // A tree cached by an older worker may lack a mount point added since (run/secrets).
    await prepareMountPoints(rootfs);
    return { digest, rootfs, env: index.env, cached: true };
  }
  /** Fetches the manifest, following an index to its linux/amd64 image, checking every digest. */
  async #resolve(client: RegistryClient, reference: string, pinned: string | undefined) {
    let body = await this.#fetchManifest(client, reference, pinned);
    let descriptorDigest = sha256(body.bytes);
    let parsed = parseManifest(body.bytes, body.contentType);
    if (parsed.kind === "index") {
      const chosen = pickPlatform(parsed.manifests);
      body = await this.#fetchManifest(client, chosen.digest, chosen.digest);
      descriptorDigest = chosen.digest;
      parsed = parseManifest(body.bytes, body.contentType);
      if (parsed.kind === "index") throw new ManifestError("an image index names another index");
    }
    return { descriptorDigest, manifest: parsed.manifest };
  }

  async #fetchManifest(client: RegistryClient, reference: string, expected: string | undefined) {
    const response = await client.get("manifests", reference, MANIFEST_ACCEPT);
    const bytes = await readAtMost(response, MAX_MANIFEST_BYTES, `manifest ${reference}`);
    const actual = sha256(bytes);
    const claimed = response.headers.get("docker-content-digest");
    if (expected && actual !== expected) {
      throw new ManifestError(`manifest digest mismatch: asked for ${expected}, received ${actual}`);
    }
    if (claimed?.startsWith("sha256:") && claimed !== actual) {
      throw new ManifestError(
        `manifest digest mismatch: the registry says ${claimed}, the bytes are ${actual}`,
      );
    }
    return { bytes, contentType: response.headers.get("content-type") };
  }

  async #unpack(
    client: RegistryClient,
    digest: string,
    manifest: { config: Descriptor; layers: Descriptor[] },
  ): Promise<PulledImage> {
    if (manifest.layers.length > MAX_LAYERS)
      throw new ManifestError(`the image has ${manifest.layers.length} layers, more than ${MAX_LAYERS}`);
    const budget = new UnpackBudget(this.#options.limits ?? DEFAULT_IMAGE_LIMITS);
    // Compressed layers are never larger than what they unpack to (give or take headers), so a
    // manifest announcing more than the limit is refused before a byte is downloaded.
    const announced = manifest.layers.reduce((sum, layer) => sum + layer.size, 0);
    if (announced > budget.limits.maxBytes)
      throw new ManifestError(
        `the image's layers are ${announced} bytes, over the limit of ${budget.limits.maxBytes} (SVC_CI_IMAGE_MAX_BYTES)`,
      );
    // Marked as this process's (worker/owned-directory.ts): the debris of a killed pull is removed
    // at the next start, while another worker's pull in progress in a shared cache is left alone.
    await mkdir(path.join(this.#options.cacheDir, "tmp"), { recursive: true, mode: 0o755 });
    const { path: temporary, remove } = await createOwnedDirectory(path.join(this.#options.cacheDir, "tmp"));
    const rootfs = path.join(temporary, "rootfs");
    try {
      await mkdir(rootfs, { mode: 0o755 });
      const config = parseImageConfig(await this.#fetchBlobBytes(client, manifest.config));
      // Downloads run concurrently; layers are applied strictly in order as each one lands.
      const downloads = manifest.layers.map((layer, i) => {
        const file = path.join(temporary, `layer-${i}`);
        const done = this.#download(client, layer, file).then(() => file);
        done.catch(() => {});
        return done;
      });
      for (const download of downloads) {
        const file = await download;
        await applyLayer(rootfs, file, budget);
        await rm(file);
      }
      await prepareMountPoints(rootfs);
      const env = envOf(config);
      const name = randomBytes(8).toString("hex");
      const tree = this.#treeDir(name);
      await mkdir(path.dirname(tree), { recursive: true, mode: 0o755 });
      await rename(rootfs, tree);
      const winner = await this.#index(digest, { rootfs: name, env }, temporary).catch(async (error) => {
        await rm(tree, { recursive: true, force: true });
        throw error;
      });
      if (!winner) return { digest, rootfs: tree, env, cached: false };
      // Another worker process on the same cache indexed it first: its tree is as good as ours.
      await rm(tree, { recursive: true, force: true });
      return { ...winner, cached: false };
    } finally {
      await remove();
    }
  }

  /**
   * Makes the tree reachable by its digest: the index is written whole in the temporary directory,
   * then hard-linked into place, which fails rather than replace an index another process made.
   * Returns that other image when it won, else null.
   */
  async #index(
    digest: string,
    index: { rootfs: string; env: string[] },
    temporary: string,
  ): Promise<PulledImage | null> {
    const written = path.join(temporary, "index.json");
    await writeFile(written, JSON.stringify(index));
    const final = this.#indexFile(digest);
    await mkdir(path.dirname(final), { recursive: true, mode: 0o755 });
    try {
      await link(written, final);
      return null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const other = await this.#lookup(digest);
      if (!other) throw error;
      return other;
    } finally {
      await unlink(written).catch(() => {});
    }
  }

  async #fetchBlobBytes(client: RegistryClient, descriptor: Descriptor): Promise<Buffer> {
    if (descriptor.size > MAX_MANIFEST_BYTES) throw new ManifestError(`image configuration is over 4 MiB`);
    const response = await client.get("blobs", descriptor.digest);
    const bytes = await readAtMost(response, MAX_MANIFEST_BYTES, "the image configuration");
    verify(descriptor, bytes.length, sha256(bytes));
    return bytes;
  }

  /** Streams a blob to a file, hashing it on the way; stops as soon as it outgrows its size. */
  async #download(client: RegistryClient, descriptor: Descriptor, file: string): Promise<void> {
    const response = await client.get("blobs", descriptor.digest);
    if (!response.body) throw new RegistryError(`blob ${descriptor.digest} has no body`);
    const hash = createHash("sha256");
    let size = 0;
    const body = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream);
    await pipeline(
      body,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          size += chunk.length;
          if (size > descriptor.size)
            throw new ManifestError(`blob ${descriptor.digest} is larger than its manifest says`);
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(file, { flags: "wx" }),
    );
    verify(descriptor, size, `sha256:${hash.digest("hex")}`);
  }
}

/** A small body read whole, stopping as soon as it outgrows `max` (a registry could send gigabytes). */
async function readAtMost(response: Response, max: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > max) {
      await response.body?.cancel().catch(() => {});
      throw new ManifestError(`${what} is over ${max / 1024 / 1024} MiB`);
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

function verify(descriptor: Descriptor, size: number, actual: string): void {
  if (actual !== descriptor.digest) {
    throw new ManifestError(`blob digest mismatch: expected ${descriptor.digest}, received ${actual}`);
  }
  if (size !== descriptor.size) throw new ManifestError(`blob ${descriptor.digest} has the wrong size`);
}

function envOf(config: ImageConfig): string[] {
  return (config.config?.Env ?? []).filter((entry) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(entry));
}

/**
 * Makes each mount point a real directory or file. Components are checked one by one without
 * following links: a layer's `run -> /etc` must not make this write into the worker's own /etc.
 */
async function prepareMountPoints(rootfs: string): Promise<void> {
  const ensure = async (relative: string, kind: "directory" | "file") => {
    const full = path.join(rootfs, relative);
    const stat = await lstat(full).catch(() => null);
    const right = kind === "directory" ? stat?.isDirectory() : stat?.isFile();
    if (right) return;
    if (stat) await rm(full, { recursive: true, force: true });
    // Another worker on the same cache may make it at the same moment: then it exists, as wanted.
    const exists = (error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    };
    if (kind === "directory") await mkdir(full, { mode: 0o755 }).catch(exists);
    else await writeFile(full, "", { flag: "wx" }).catch(exists);
  };
  for (const relative of MOUNT_DIRECTORIES) {
    const parts = relative.split("/");
    for (let i = 1; i <= parts.length; i++) await ensure(parts.slice(0, i).join("/"), "directory");
  }
  for (const relative of MOUNT_FILES) await ensure(relative, "file");
}
