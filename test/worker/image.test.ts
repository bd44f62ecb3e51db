import { readdirSync } from "node:fs";
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDockerCredentials } from "../../worker/image/credentials.ts";
import { applyLayer, UnpackBudget } from "../../worker/image/layers.ts";
import { parseImageReference } from "../../worker/image/reference.ts";
import { registryBaseUrl } from "../../worker/image/registry-client.ts";
import { ImageStore } from "../../worker/image/store.ts";
import { crane, layerTar, pushBusyboxImage, pushImage, startRegistry } from "../support/oci-registry.ts";
import { type RegistryFrontOptions, startRegistryFront } from "../support/registry-front.ts";

/**
 * Pulling images: the real go-containerregistry registry on 127.0.0.1, and an HTTP front before it
 * for what that registry does not do (authentication challenges, lying about bytes).
 */
let registry: Awaited<ReturnType<typeof startRegistry>>;
let busybox: { ref: string; digest: string };
let scratch: string;
let caches = 0;
/** The cache directory of the store `storeFor` made last. */
let lastCacheDir = "";

beforeAll(async () => {
  registry = await startRegistry();
  busybox = await pushBusyboxImage(registry.host);
  scratch = await mkdtemp(path.join(tmpdir(), "quire-image-test-"));
});

afterAll(async () => {
  await registry?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function storeFor(host: string, dockerConfig?: object): Promise<ImageStore> {
  let configPath: string | undefined;
  if (dockerConfig) {
    configPath = path.join(scratch, `docker-config-${++caches}.json`);
    await writeFile(configPath, JSON.stringify(dockerConfig));
  }
  lastCacheDir = path.join(scratch, `cache-${++caches}`);
  return new ImageStore({
    cacheDir: lastCacheDir,
    insecureRegistries: [host],
    credentials: await loadDockerCredentials(configPath),
  });
}

/** A front before the registry, closed after the test body. */
async function withFront<T>(
  options: Omit<RegistryFrontOptions, "upstream">,
  body: (front: Awaited<ReturnType<typeof startRegistryFront>>) => Promise<T>,
): Promise<T> {
  const front = await startRegistryFront({ upstream: registry.host, ...options });
  try {
    return await body(front);
  } finally {
    await front.close();
  }
}

const onFront = (front: { host: string }, ref: string) => ref.replace(registry.host, front.host);

describe("image references", () => {
  it.each([
    ["busybox", { registry: "registry-1.docker.io", repository: "library/busybox", tag: "latest" }],
    ["docker.io/org/tool:1.2", { registry: "registry-1.docker.io", repository: "org/tool", tag: "1.2" }],
    ["ghcr.io/o/r/sub:v1", { registry: "ghcr.io", repository: "o/r/sub", tag: "v1" }],
    ["localhost:5000/app", { registry: "localhost:5000", repository: "app", tag: "latest" }],
    [
      `127.0.0.1:5000/a/b@sha256:${"a".repeat(64)}`,
      { registry: "127.0.0.1:5000", repository: "a/b", digest: `sha256:${"a".repeat(64)}` },
    ],
    [
      `r.io/a:t@sha256:${"b".repeat(64)}`,
      { registry: "r.io", repository: "a", tag: "t", digest: `sha256:${"b".repeat(64)}` },
    ],
  ])("parses %s", (input, expected) => {
    expect(parseImageReference(input)).toEqual(expected);
  });

  it.each(["", "UPPER/case", "a//b", "a:bad tag", "a@sha256:short", "a@md5:abcd", "../x"])(
    "refuses %j",
    (input) => {
      expect(() => parseImageReference(input)).toThrow(/invalid image reference/);
    },
  );

  it("allows plain HTTP only to listed loopback registries", () => {
    expect(registryBaseUrl("127.0.0.1:5000", ["127.0.0.1:5000"])).toBe("http://127.0.0.1:5000");
    expect(registryBaseUrl("localhost:5000", ["localhost:5000"])).toBe("http://localhost:5000");
    expect(registryBaseUrl("127.0.0.1:5000", [])).toBe("https://127.0.0.1:5000");
    expect(() => registryBaseUrl("10.1.2.3:5000", ["10.1.2.3:5000"])).toThrow(/not a loopback address/);
    expect(() => registryBaseUrl("registry.internal:5000", ["registry.internal:5000"])).toThrow(
      /not a loopback/,
    );
  });
});

describe("pulling", () => {
  it("pulls an image anonymously into a root filesystem, then serves it from the cache", async () => {
    await withFront({}, async (front) => {
      const store = await storeFor(front.host);
      const first = await store.pull(onFront(front, busybox.ref));
      expect(first).toMatchObject({ digest: busybox.digest, cached: false });
      expect((await lstat(path.join(first.rootfs, "bin/busybox"))).isFile()).toBe(true);
      expect(await readlink(path.join(first.rootfs, "bin/sh"))).toBe("busybox");
      expect(front.requests.filter((r) => r.includes("/blobs/"))).toHaveLength(2); // config + layer
      front.requests.length = 0;
      const second = await store.pull(onFront(front, busybox.ref));
      expect(second).toMatchObject({ digest: busybox.digest, cached: true, rootfs: first.rootfs });
      expect(front.requests.filter((r) => r.includes("/blobs/"))).toEqual([]);
      // Pinned by digest, a cached image does not even need its manifest.
      front.requests.length = 0;
      const pinned = await store.pull(`${front.host}/quire/busybox@${busybox.digest}`);
      expect(pinned).toMatchObject({ digest: busybox.digest, cached: true });
      expect(front.requests).toEqual([]);
    });
    // Nothing half-done is left behind: the downloads and the unpacking happened in tmp/.
    expect(await readdir(path.join(lastCacheDir, "tmp"))).toEqual([]);
    expect(await readdir(path.join(lastCacheDir, "images"))).toEqual([
      `${busybox.digest.replace(":", "-")}.json`,
    ]);
  });

  it("keeps each root filesystem under a random name, found through the digest's index", async () => {
    // A step reads its root's host path in /proc/self/mountinfo: the path names no digest.
    const store = await storeFor(registry.host);
    const pulled = await store.pull(busybox.ref);
    expect(pulled.rootfs).toMatch(new RegExp(`^${lastCacheDir}/r/[0-9a-f]{16}$`));
    expect(pulled.rootfs).not.toContain(busybox.digest.slice(7, 19));
    expect((await lstat(path.join(pulled.rootfs, "bin/busybox"))).isFile()).toBe(true);
    // Nothing but the image: the index is beside the tree, not in it.
    expect(await readdir(pulled.rootfs)).not.toContain("image.json");
    const index = path.join(lastCacheDir, "images", `${busybox.digest.replace(":", "-")}.json`);
    expect(JSON.parse(await readFile(index, "utf8"))).toEqual({
      rootfs: path.basename(pulled.rootfs),
      env: pulled.env,
    });
  });

  it("unpacks in a directory of tmp/ marked as this process's, so a killed pull is cleaned up", async () => {
    // What tmp/ holds while the registry sends a blob: the pull's directory and its marker.
    const seen: string[][] = [];
    await withFront(
      {
        tamper: (kind, body) => {
          if (kind === "blobs") seen.push(readdirSync(path.join(lastCacheDir, "tmp")).sort());
          return body;
        },
      },
      async (front) => (await storeFor(front.host)).pull(onFront(front, busybox.ref)),
    );
    expect(seen.length).toBeGreaterThan(0);
    for (const names of seen) {
      expect(names).toHaveLength(2);
      const [marker, directory] = names;
      expect(directory).toMatch(/^[A-Za-z0-9]{6}$/);
      expect(marker).toBe(`.${directory}.quire-owner`);
    }
    expect(await readdir(path.join(lastCacheDir, "tmp"))).toEqual([]);
  });

  it("lets two worker processes pull one image into one cache: the first indexed wins", async () => {
    const first = await storeFor(registry.host);
    const second = new ImageStore({
      cacheDir: lastCacheDir,
      insecureRegistries: [registry.host],
      credentials: await loadDockerCredentials(undefined),
    });
    const [a, b] = await Promise.all([first.pull(busybox.ref), second.pull(busybox.ref)]);
    expect(a.rootfs).toBe(b.rootfs);
    // The loser dropped its own tree and its temporary directory.
    expect(await readdir(path.join(lastCacheDir, "r"))).toEqual([path.basename(a.rootfs)]);
    expect(await readdir(path.join(lastCacheDir, "tmp"))).toEqual([]);
    expect((await lstat(path.join(a.rootfs, "bin/busybox"))).isFile()).toBe(true);
  });

  it("refuses an index that names anything but a tree of its own", async () => {
    const store = await storeFor(registry.host);
    const pinned = `${registry.host}/quire/busybox@${busybox.digest}`;
    await mkdir(path.join(lastCacheDir, "images"), { recursive: true });
    const index = path.join(lastCacheDir, "images", `${busybox.digest.replace(":", "-")}.json`);
    await writeFile(index, JSON.stringify({ rootfs: "../../../etc", env: [] }));
    await expect(store.pull(pinned)).rejects.toThrow(/index .* is damaged/);
  });

  it("pulls by digest and follows an image index to its linux/amd64 image", async () => {
    const amd = await pushImage(`${registry.host}/multi:amd`, [
      await layerTar([{ path: "arch", type: "file", content: "amd64\n" }]),
    ]);
    const arm = await pushImage(`${registry.host}/multi:arm`, [
      await layerTar([{ path: "arch", type: "file", content: "arm64\n" }]),
    ]);
    await crane("mutate", amd.ref, "--set-platform", "linux/amd64");
    await crane("mutate", arm.ref, "--set-platform", "linux/arm64");
    await crane("index", "append", "-m", arm.ref, "-m", amd.ref, "-t", `${registry.host}/multi:both`);
    const index = await crane("digest", `${registry.host}/multi:both`);
    const store = await storeFor(registry.host);
    const pulled = await store.pull(`${registry.host}/multi@${index}`);
    expect(await readFile(path.join(pulled.rootfs, "arch"), "utf8")).toBe("amd64\n");
    expect(pulled.digest).toBe(await crane("digest", amd.ref));
    // Asked for by its own tag, an image for another platform is refused before it is unpacked.
    await expect(store.pull(arm.ref)).rejects.toThrow(/is for linux\/arm64; the worker runs linux\/amd64/);
  });

  it("honours whiteouts and opaque directories across layers", async () => {
    const lower = await layerTar([
      { path: "keep/a", type: "file", content: "a" },
      { path: "keep/gone", type: "file", content: "x" },
      { path: "gone-dir/inner", type: "file", content: "x" },
      { path: "opaque/old", type: "file", content: "old" },
      { path: "opaque/sub/deep", type: "file", content: "old" },
    ]);
    const upper = await layerTar([
      { path: "keep/.wh.gone", type: "file", content: "" },
      { path: ".wh.gone-dir", type: "file", content: "" },
      // The same layer's own entries survive its opaque marker, whatever the order in the tar.
      { path: "opaque/new", type: "file", content: "new" },
      { path: "opaque/.wh..wh..opq", type: "file", content: "" },
    ]);
    const image = await pushImage(`${registry.host}/layered:1`, [lower, upper]);
    const { rootfs } = await (await storeFor(registry.host)).pull(image.ref);
    expect((await readdir(path.join(rootfs, "keep"))).sort()).toEqual(["a"]);
    await expect(lstat(path.join(rootfs, "gone-dir"))).rejects.toThrow(/ENOENT/);
    expect(await readdir(path.join(rootfs, "opaque"))).toEqual(["new"]);
    expect(await readFile(path.join(rootfs, "opaque/new"), "utf8")).toBe("new");
    const names = await readdir(rootfs, { recursive: true });
    expect(names.filter((n) => n.includes(".wh."))).toEqual([]);
  });

  it("tries a registry having a bad moment again, and gives up after three attempts", async () => {
    await withFront({ failFirst: 2 }, async (front) => {
      const pulled = await (await storeFor(front.host)).pull(onFront(front, busybox.ref));
      expect(pulled.digest).toBe(busybox.digest);
    });
    await withFront({ failFirst: 3 }, async (front) => {
      const store = await storeFor(front.host);
      await expect(store.pull(onFront(front, busybox.ref))).rejects.toThrow(/the registry answered 503/);
      expect(front.requests).toHaveLength(3);
    });
  });

  it("stops reading a manifest that outgrows 4 MiB", async () => {
    const huge = (kind: string, body: Buffer) =>
      kind === "manifests" ? Buffer.alloc(5 * 1024 * 1024, 0x20) : body;
    await withFront({ tamper: huge }, async (front) => {
      const store = await storeFor(front.host);
      await expect(store.pull(onFront(front, busybox.ref))).rejects.toThrow(/manifest latest is over 4 MiB/);
    });
  });

  it("refuses a blob whose bytes do not match its digest", async () => {
    const flip = (body: Buffer) => {
      const copy = Buffer.from(body);
      copy[copy.length - 1] = (copy[copy.length - 1] ?? 0) ^ 0xff;
      return copy;
    };
    await withFront({ tamper: (kind, body) => (kind === "blobs" ? flip(body) : body) }, async (front) => {
      const store = await storeFor(front.host);
      await expect(store.pull(onFront(front, busybox.ref))).rejects.toThrow(/blob digest mismatch/);
      await expect(readdir(path.join(lastCacheDir, "images"))).rejects.toThrow(/ENOENT/);
      expect(await readdir(path.join(lastCacheDir, "tmp"))).toEqual([]);
    });
  });

  it("refuses a manifest whose bytes do not match the digest asked for or announced", async () => {
    const pad = (kind: string, body: Buffer) =>
      kind === "manifests" ? Buffer.concat([body, Buffer.from(" ")]) : body;
    await withFront({ tamper: pad }, async (front) => {
      const store = await storeFor(front.host);
      const byDigest = `${front.host}/quire/busybox@${busybox.digest}`;
      await expect(store.pull(byDigest)).rejects.toThrow(/manifest digest mismatch: asked for/);
      await expect(store.pull(onFront(front, busybox.ref))).rejects.toThrow(
        /manifest digest mismatch: the registry says/,
      );
    });
  });
});

describe("registry authentication", () => {
  const auth = { username: "ci-bot", password: "s3cret-pass" };

  it("answers a Bearer challenge with a token fetched with the Docker config's credentials", async () => {
    await withFront({ auth: { scheme: "bearer", ...auth } }, async (front) => {
      const encoded = Buffer.from(`${auth.username}:${auth.password}`).toString("base64");
      const store = await storeFor(front.host, {
        auths: { [`http://${front.host}/v2/`]: { auth: encoded } },
      });
      const pulled = await store.pull(onFront(front, busybox.ref));
      expect(pulled.digest).toBe(busybox.digest);
      const tokenRequests = front.requests.filter((r) => r.startsWith("/token?"));
      expect(tokenRequests.length).toBeGreaterThanOrEqual(1);
      expect(tokenRequests[0]).toContain("scope=repository%3Aquire%2Fbusybox%3Apull");
    });
  });

  it("answers a Basic challenge with the Docker config's user name and password", async () => {
    await withFront({ auth: { scheme: "basic", ...auth } }, async (front) => {
      const store = await storeFor(front.host, { auths: { [front.host]: auth }, credsStore: "unused" });
      expect((await store.pull(onFront(front, busybox.ref))).digest).toBe(busybox.digest);
    });
  });

  it("fails clearly without credentials or with wrong ones", async () => {
    await withFront({ auth: { scheme: "bearer", ...auth } }, async (front) => {
      const anonymous = await storeFor(front.host);
      await expect(anonymous.pull(onFront(front, busybox.ref))).rejects.toThrow(
        /token service .* refused \(401\)/,
      );
      const wrong = await storeFor(front.host, { auths: { [front.host]: { ...auth, password: "nope" } } });
      await expect(wrong.pull(onFront(front, busybox.ref))).rejects.toThrow(/refused \(401\)/);
    });
    await withFront({ auth: { scheme: "basic", ...auth } }, async (front) => {
      await expect((await storeFor(front.host)).pull(onFront(front, busybox.ref))).rejects.toThrow(
        /needs credentials/,
      );
    });
  });
});

describe("hostile layers", () => {
  async function apply(
    entries: Parameters<typeof layerTar>[0],
    compress = (b: Buffer) => b,
  ): Promise<string> {
    const target = await mkdtemp(path.join(scratch, "root-"));
    const blob = `${target}.tar`;
    await writeFile(blob, compress(await layerTar(entries)));
    await applyLayer(target, blob);
    return target;
  }

  it("reads plain, gzip and zstd layers, and roots absolute and ./ names in the root", async () => {
    const entries = [
      { path: "/abs/file", type: "file" as const, content: "abs" },
      { path: "./dot/file", type: "file" as const, content: "dot" },
    ];
    for (const compress of [(b: Buffer) => b, zlib.gzipSync, zlib.zstdCompressSync]) {
      const root = await apply(entries, compress);
      expect(await readFile(path.join(root, "abs/file"), "utf8")).toBe("abs");
      expect(await readFile(path.join(root, "dot/file"), "utf8")).toBe("dot");
    }
    const garbage = await mkdtemp(path.join(scratch, "root-"));
    await writeFile(
      `${garbage}.tar`,
      zlib.gzipSync(Buffer.from("not a tar at all, but long enough ".repeat(40))),
    );
    await expect(applyLayer(garbage, `${garbage}.tar`)).rejects.toThrow(/layer cannot be unpacked/);
  });

  it("refuses entries that climb out of the root", async () => {
    await expect(apply([{ path: "../escaped", type: "file", content: "x" }])).rejects.toThrow(
      /escapes the root/,
    );
    await expect(apply([{ path: "a/../../escaped", type: "file", content: "x" }])).rejects.toThrow(
      /escapes the root/,
    );
    await expect(lstat(path.join(scratch, "escaped"))).rejects.toThrow(/ENOENT/);
    // A whiteout of `..` at the top would delete the root's parent.
    const sibling = await mkdtemp(path.join(scratch, "sibling-"));
    for (const name of [".wh...", "sub/.wh...", ".wh..", ".wh."]) {
      await expect(apply([{ path: name, type: "file", content: "" }])).rejects.toThrow(/invalid whiteout/);
    }
    expect((await lstat(sibling)).isDirectory()).toBe(true);
  });

  it("keeps writes through planted symbolic links inside the root", async () => {
    const outside = path.join(scratch, "outside");
    await mkdir(outside);
    const root = await apply([
      { path: "abs", type: "symlink", target: outside },
      { path: "rel", type: "symlink", target: "../../../../outside" },
      { path: "abs/pwned", type: "file", content: "x" },
      { path: "rel/pwned-too", type: "file", content: "x" },
    ]);
    expect(await readdir(outside)).toEqual([]);
    expect(await readFile(path.join(root, outside, "pwned"), "utf8")).toBe("x");
    expect(await readFile(path.join(root, "outside", "pwned-too"), "utf8")).toBe("x");
    // The links themselves stay as written: inside the sandbox `/` is the root, so they point within it.
    expect(await readlink(path.join(root, "abs"))).toBe(outside);
  });

  it("refuses hard links to files outside the root and drops setuid bits", async () => {
    const link = (target: string) => [
      { path: "bin/tool", type: "file" as const, content: "tool" },
      { path: "hard", type: "link" as const, target },
    ];
    await expect(apply(link("../../etc/passwd"))).rejects.toThrow(/escapes the root/);
    await expect(apply(link("missing"))).rejects.toThrow(/hard link to a missing file/);
    const linked = await apply(link("bin/tool"));
    expect((await lstat(path.join(linked, "hard"))).nlink).toBe(2);
    const root = await apply([{ path: "bin/tool", type: "file", content: "tool", mode: 0o4755 }]);
    expect((await lstat(path.join(root, "bin/tool"))).mode & 0o7777).toBe(0o755);
  });
});

describe("image limits", () => {
  /** A layer of one 4 MiB file of zeros: 4 kB gzipped, as a decompression bomb is. */
  const bomb = async () =>
    zlib.gzipSync(await layerTar([{ path: "big", type: "file", content: Buffer.alloc(4 * 1024 * 1024) }]));
  const manyFiles = (n: number, prefix = "f") =>
    Array.from({ length: n }, (_, i) => ({ path: `${prefix}${i}`, type: "file" as const, content: "x" }));

  it("refuses a small gzip layer that unpacks past the byte limit, before writing the file", async () => {
    const root = await mkdtemp(path.join(scratch, "root-"));
    const blob = `${root}.tar.gz`;
    await writeFile(blob, await bomb());
    expect((await lstat(blob)).size).toBeLessThan(16 * 1024);
    const budget = new UnpackBudget({ maxBytes: 1024 * 1024, maxEntries: 100 });
    await expect(applyLayer(root, blob, budget)).rejects.toThrow(
      'the image unpacks to more than 1048576 bytes (SVC_CI_IMAGE_MAX_BYTES), at "big"',
    );
    expect(await readdir(root)).toEqual([]);
  });

  it("refuses a layer with more entries than the limit, counting across the image's layers", async () => {
    const root = await mkdtemp(path.join(scratch, "root-"));
    await writeFile(`${root}-1.tar`, await layerTar(manyFiles(15, "a")));
    await writeFile(`${root}-2.tar`, await layerTar(manyFiles(15, "b")));
    const budget = new UnpackBudget({ maxBytes: 1024 * 1024, maxEntries: 20 });
    await applyLayer(root, `${root}-1.tar`, budget);
    await expect(applyLayer(root, `${root}-2.tar`, budget)).rejects.toThrow(
      'the image has more than 20 entries (SVC_CI_IMAGE_MAX_ENTRIES), at "b5"',
    );
    expect((await readdir(root)).length).toBe(20);
  });

  it("fails the pull with the limit named and leaves nothing in the cache", async () => {
    const bombed = await pushImage(`${registry.host}/quire/bomb:1`, [await bomb()]);
    const crowded = await pushImage(`${registry.host}/quire/crowded:1`, [await layerTar(manyFiles(50))]);
    const cacheDir = path.join(scratch, "cache-limits");
    const store = (limits: { maxBytes: number; maxEntries: number }) =>
      new ImageStore({ cacheDir, insecureRegistries: [registry.host], credentials: () => undefined, limits });
    await expect(store({ maxBytes: 1024 * 1024, maxEntries: 100 }).pull(bombed.ref)).rejects.toThrow(
      /quire\/bomb:1: the image unpacks to more than 1048576 bytes \(SVC_CI_IMAGE_MAX_BYTES\), at "big"/,
    );
    await expect(store({ maxBytes: 1024 * 1024, maxEntries: 40 }).pull(crowded.ref)).rejects.toThrow(
      /more than 40 entries \(SVC_CI_IMAGE_MAX_ENTRIES\)/,
    );
    // A manifest announcing more than the limit in layers is refused before any download.
    await expect(store({ maxBytes: 100, maxEntries: 100 }).pull(bombed.ref)).rejects.toThrow(
      /the image's layers are \d+ bytes, over the limit of 100 \(SVC_CI_IMAGE_MAX_BYTES\)/,
    );
    expect(await readdir(path.join(cacheDir, "tmp"))).toEqual([]);
    await expect(readdir(path.join(cacheDir, "images"))).rejects.toThrow(/ENOENT/);
    // Thousands of empty layers touch neither limit; their number is capped on its own.
    const empty = await layerTar([]);
    const layered = await pushImage(`${registry.host}/quire/layered:1`, Array(257).fill(empty));
    await expect(store({ maxBytes: 1024 * 1024, maxEntries: 100 }).pull(layered.ref)).rejects.toThrow(
      /the image has 257 layers, more than 256/,
    );
    // Within the limits, the same image pulls.
    const pulled = await store({ maxBytes: 8 * 1024 * 1024, maxEntries: 100 }).pull(bombed.ref);
    expect((await lstat(path.join(pulled.rootfs, "big"))).size).toBe(4 * 1024 * 1024);
  });
});
