/**
 * Image references as `docker pull` reads them: `[registry[:port]/]repository[:tag][@digest]`.
 * A first path component is a registry only when it looks like a host (has a `.` or a `:`, or is
 * `localhost`); otherwise the image is on Docker Hub, whose official images live under `library/`.
 */
export interface ImageReference {
  /** The `host[:port]` the distribution API is reached at (Docker Hub's is registry-1.docker.io). */
  registry: string;
  repository: string;
  /** The tag, `latest` when neither a tag nor a digest is given. */
  tag?: string;
  /** `sha256:<hex>` when the reference pins one; it then wins over the tag. */
  digest?: string;
}

export const DOCKER_HUB_REGISTRY = "registry-1.docker.io";

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]{1,5})?$/;

export class ImageReferenceError extends Error {
  override name = "ImageReferenceError";
}

/** Parses an image reference, refusing anything `docker pull` would refuse. */
export function parseImageReference(input: string): ImageReference {
  const bad = (why: string) => new ImageReferenceError(`invalid image reference "${input}": ${why}`);
  if (input.length === 0 || input.length > 512) throw bad("empty or longer than 512 characters");

  let rest = input;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw bad("the digest must be sha256: and 64 lowercase hex digits");
  }

  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf("/");
  const colon = rest.lastIndexOf(":");
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw bad("invalid tag");
  }

  const parts = rest.split("/");
  let registry = DOCKER_HUB_REGISTRY;
  const first = parts[0] ?? "";
  if (parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost")) {
    if (!HOST.test(first)) throw bad("invalid registry host");
    registry = first === "docker.io" || first === "index.docker.io" ? DOCKER_HUB_REGISTRY : first;
    parts.shift();
  }
  if (parts.length === 0 || parts.some((p) => !COMPONENT.test(p))) {
    throw bad("repository names are lowercase letters, digits and separators");
  }
  if (registry === DOCKER_HUB_REGISTRY && parts.length === 1) parts.unshift("library");

  const ref: ImageReference = { registry, repository: parts.join("/") };
  if (digest) ref.digest = digest;
  if (tag || !digest) ref.tag = tag ?? "latest";
  return ref;
}

/** The reference written back out in its canonical form, for logs. */
export function formatImageReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}
