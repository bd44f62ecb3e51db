import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { lstat, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
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
const MOUNT_DIRECTORIES = ["src", "tmp", "proc", "dev", "run/quire", "etc"];
const MOUNT_FILES = ["etc/hosts", "etc/resolv.conf"];

function sha256(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

/**
 * Pulls images over the OCI distribution API into root filesystems cached by manifest digest under
 * `<cacheDir>/images/<digest>`. Every manifest and blob is checked against its digest before use; a
 * root filesystem is unpacked into a temporary directory and renamed into place, so a crash leaves
 * either nothing or a complete tree, and concurrent pulls of one image (in this process) share one.
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
    if (ref.digest && (await exists(path.join(this.#imageDir(ref.digest), "image.json")))) {
      return this.#load(ref.digest, true);
    }
    const client = new RegistryClient(ref.registry, ref.repository, this.#options);
    const { descriptorDigest, manifest } = await this.#resolve(
      client,
      ref.digest ?? ref.tag ?? "latest",
      ref.digest,
    );
    const directory = this.#imageDir(descriptorDigest);
    if (await exists(path.join(directory, "image.json"))) return this.#load(descriptorDigest, true);
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

  #imageDir(digest: string): string {
    return path.join(this.#options.cacheDir, "images", digest.replace(":", "-"));
  }

  async #load(digest: string, cached: boolean): Promise<PulledImage> {
    const directory = this.#imageDir(digest);
    const meta = JSON.parse(await readFile(path.join(directory, "image.json"), "utf8")) as { env: string[] };
    return { digest, rootfs: path.join(directory, "rootfs"), env: meta.env, cached };
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
    const temporary = path.join(
      this.#options.cacheDir,
      "tmp",
      `${digest.slice(7, 19)}-${randomBytes(6).toString("hex")}`,
    );
    const rootfs = path.join(temporary, "rootfs");
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
    await mkdir(rootfs, { recursive: true, mode: 0o755 });
    try {
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
      await writeFile(path.join(temporary, "image.json"), JSON.stringify({ digest, env: envOf(config) }));
      const final = this.#imageDir(digest);
      await mkdir(path.dirname(final), { recursive: true });
      try {
        await rename(temporary, final);
      } catch (error) {
        // Another worker process on the same cache finished first: its tree is as good as ours.
        if (!(await exists(path.join(final, "image.json")))) throw error;
        await rm(temporary, { recursive: true, force: true });
      }
      return await this.#load(digest, false);
    } catch (error) {
      await rm(temporary, { recursive: true, force: true });
      throw error;
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
    if (kind === "directory") await mkdir(full, { mode: 0o755 });
    else await writeFile(full, "", { flag: "wx" });
  };
  for (const relative of MOUNT_DIRECTORIES) {
    const parts = relative.split("/");
    for (let i = 1; i <= parts.length; i++) await ensure(parts.slice(0, i).join("/"), "directory");
  }
  for (const relative of MOUNT_FILES) await ensure(relative, "file");
}
