import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { pack as tarPack } from "tar-stream";
import { freePort } from "./ports.ts";

const tools = fileURLToPath(new URL("../../.tools/bin/", import.meta.url));
const run = promisify(execFile);

/**
 * go-containerregistry's registry (built into .tools/bin by emulators/install.sh), in memory, on
 * 127.0.0.1 and a free port. The worker reaches it over plain HTTP as an insecure loopback registry.
 */
export async function startRegistry(): Promise<{ host: string; close(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(path.join(tools, "registry"), ["-port", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4096); // it logs every request; keep the tail
  });
  const host = `127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ready = await fetch(`http://${host}/v2/`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the test registry did not start on ${host}: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    host,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** One file of a test layer: a regular file (with its mode), a directory, a symbolic or hard link. */
export type LayerEntry =
  | { path: string; type: "file"; content: string | Buffer; mode?: number }
  | { path: string; type: "directory" }
  | { path: string; type: "symlink" | "link"; target: string };

/** An uncompressed layer tar holding these entries, in this order. */
export function layerTar(entries: LayerEntry[]): Promise<Buffer> {
  const pack = tarPack();
  const chunks: Buffer[] = [];
  pack.on("data", (chunk) => chunks.push(chunk as Buffer));
  const done = new Promise<Buffer>((resolve, reject) => {
    pack.on("end", () => resolve(Buffer.concat(chunks)));
    pack.on("error", reject);
  });
  for (const entry of entries) {
    if (entry.type === "file") {
      pack.entry({ name: entry.path, type: "file", mode: entry.mode ?? 0o644 }, Buffer.from(entry.content));
    } else if (entry.type === "directory") {
      pack.entry({ name: entry.path, type: "directory", mode: 0o755 });
    } else {
      pack.entry({ name: entry.path, type: entry.type, linkname: entry.target });
    }
  }
  pack.finalize();
  return done;
}

/** The base layer: Debian's static busybox as /bin/busybox, each applet a link to it, /etc/passwd. */
function busyboxLayer(): Promise<Buffer> {
  const applets = execFileSync("/bin/busybox", ["--list"], { encoding: "utf8" })
    .split("\n")
    .filter((name) => /^[a-z0-9_.[-]+$/.test(name) && name !== "busybox");
  return layerTar([
    { path: "bin", type: "directory" },
    { path: "bin/busybox", type: "file", content: readFileSync("/bin/busybox"), mode: 0o755 },
    ...applets.map((name) => ({ path: `bin/${name}`, type: "symlink" as const, target: "busybox" })),
    { path: "etc", type: "directory" },
    { path: "etc/passwd", type: "file", content: "root:x:0:0:root:/root:/bin/sh\n" },
    { path: "etc/group", type: "file", content: "root:x:0:\n" },
  ]);
}

/**
 * Pushes an image made of these layers (tar buffers, applied in order) with crane, which writes
 * the config and manifest (Docker media types, gzip layers). Returns the tag and manifest digest.
 */
export async function pushImage(ref: string, layers: Buffer[]): Promise<{ ref: string; digest: string }> {
  const directory = await mkdtemp(path.join(tmpdir(), "quire-image-"));
  try {
    const files: string[] = [];
    for (const [i, layer] of layers.entries()) {
      const file = path.join(directory, `layer-${i}.tar`);
      await writeFile(file, layer);
      files.push("-f", file);
    }
    await crane("append", ...files, "-t", ref);
    return { ref, digest: await crane("digest", ref) };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Runs go-containerregistry's `crane` against the test registry (plain HTTP); returns its stdout. */
export async function crane(...args: string[]): Promise<string> {
  const { stdout } = await run(path.join(tools, "crane"), [...args, "--insecure"]);
  return stdout.trim();
}

/** The tests' image: busybox's shell and usual applets, nothing else. */
export async function pushBusyboxImage(
  host: string,
  repo = "quire/busybox",
): Promise<{ ref: string; digest: string }> {
  return pushImage(`${host}/${repo}:latest`, [await busyboxLayer()]);
}
