import { readFile } from "node:fs/promises";
import { createGunzip } from "node:zlib";
import { extract } from "tar-stream";

/**
 * `/policy.wasm` out of the bundle `opa build` writes: a gzipped tar of `.manifest`, `data.json`,
 * the source and the wasm. Only the wasm is kept; the entrypoints are known from the build's own
 * arguments, and the policies take no data.
 */
export async function wasmFromBundle(file: string): Promise<Buffer | null> {
  const tar = extract();
  let wasm: Buffer | null = null;
  tar.on("entry", (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c) => chunks.push(c as Buffer));
    stream.on("end", () => {
      if (header.name.replace(/^\/+/, "") === "policy.wasm") wasm = Buffer.concat(chunks);
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    tar.on("finish", resolve);
    tar.on("error", reject);
  });
  const gunzip = createGunzip();
  gunzip.on("error", (e) => tar.destroy(e));
  gunzip.pipe(tar);
  gunzip.end(await readFile(file));
  await done;
  return wasm;
}
