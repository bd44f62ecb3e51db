import { z } from "zod";

/** The manifest media types the worker asks for, OCI first, then Docker's v2 schema 2. */
export const MEDIA = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;

export const MANIFEST_ACCEPT = [MEDIA.ociIndex, MEDIA.ociManifest, MEDIA.dockerList, MEDIA.dockerManifest];

const LAYER_TYPES = new Set([
  "application/vnd.oci.image.layer.v1.tar",
  "application/vnd.oci.image.layer.v1.tar+gzip",
  "application/vnd.oci.image.layer.v1.tar+zstd",
  "application/vnd.oci.image.layer.nondistributable.v1.tar",
  "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
  "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
  "application/vnd.docker.image.rootfs.diff.tar.gzip",
  "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
]);

const digest = z.string().regex(/^sha256:[a-f0-9]{64}$/, "only sha256 digests are supported");

const descriptor = z.object({
  mediaType: z.string(),
  digest,
  size: z.number().int().nonnegative(),
  urls: z.array(z.string()).optional(),
});
export type Descriptor = z.infer<typeof descriptor>;

const platform = z.object({ os: z.string(), architecture: z.string(), variant: z.string().optional() });

const index = z.object({
  mediaType: z.string().optional(),
  manifests: z.array(descriptor.extend({ platform: platform.optional() })),
});

const manifest = z.object({
  mediaType: z.string().optional(),
  config: descriptor,
  layers: z.array(descriptor),
});
export type ImageManifest = z.infer<typeof manifest>;

/** The part of the image configuration the sandbox uses. */
const imageConfig = z.object({
  os: z.string().optional(),
  architecture: z.string().optional(),
  config: z.object({ Env: z.array(z.string()).nullish(), WorkingDir: z.string().nullish() }).nullish(),
});
export type ImageConfig = z.infer<typeof imageConfig>;

export class ManifestError extends Error {
  override name = "ManifestError";
}

function parseJson(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new ManifestError(`${what} is not JSON`);
  }
}

/**
 * What a manifest request returned: an index (pick a platform and fetch again) or an image
 * manifest. The media type comes from the document when present, else from Content-Type.
 */
export function parseManifest(
  bytes: Buffer,
  contentType: string | null,
):
  | { kind: "index"; manifests: z.infer<typeof index>["manifests"] }
  | { kind: "image"; manifest: ImageManifest } {
  const json = parseJson(bytes, "the manifest");
  const declared = (json as { mediaType?: unknown }).mediaType;
  const mediaType = typeof declared === "string" ? declared : (contentType?.split(";")[0]?.trim() ?? "");
  if (
    mediaType === MEDIA.ociIndex ||
    mediaType === MEDIA.dockerList ||
    (!declared && "manifests" in (json as object))
  ) {
    const parsed = index.safeParse(json);
    if (!parsed.success) throw new ManifestError(`invalid image index: ${parsed.error.issues[0]?.message}`);
    return { kind: "index", manifests: parsed.data.manifests };
  }
  if (mediaType !== MEDIA.ociManifest && mediaType !== MEDIA.dockerManifest && declared !== undefined) {
    throw new ManifestError(`unsupported manifest media type ${mediaType}`);
  }
  const parsed = manifest.safeParse(json);
  if (!parsed.success) throw new ManifestError(`invalid image manifest: ${parsed.error.issues[0]?.message}`);
  for (const layer of parsed.data.layers) {
    if (!LAYER_TYPES.has(layer.mediaType))
      throw new ManifestError(`unsupported layer media type ${layer.mediaType}`);
  }
  return { kind: "image", manifest: parsed.data };
}

/** The linux/amd64 entry of an index (the worker's nodes are amd64). */
export function pickPlatform(manifests: z.infer<typeof index>["manifests"]): Descriptor {
  const match = manifests.find((m) => m.platform?.os === "linux" && m.platform.architecture === "amd64");
  if (!match) {
    const offered = manifests
      .map((m) => (m.platform ? `${m.platform.os}/${m.platform.architecture}` : "?"))
      .join(", ");
    throw new ManifestError(`the image has no linux/amd64 variant (it offers ${offered || "nothing"})`);
  }
  return match;
}

export function parseImageConfig(bytes: Buffer): ImageConfig {
  const parsed = imageConfig.safeParse(parseJson(bytes, "the image configuration"));
  if (!parsed.success)
    throw new ManifestError(`invalid image configuration: ${parsed.error.issues[0]?.message}`);
  const { os, architecture } = parsed.data;
  // Empty values (images built from nothing, as crane does) say nothing and pass.
  if ((os && os !== "linux") || (architecture && architecture !== "amd64")) {
    throw new ManifestError(
      `the image is for ${os || "?"}/${architecture || "?"}; the worker runs linux/amd64`,
    );
  }
  return parsed.data;
}
