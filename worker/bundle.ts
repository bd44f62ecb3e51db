import path from "node:path";
import { build } from "esbuild";

/**
 * The worker as one plain-JavaScript file for its container image (worker/Dockerfile): esbuild
 * bundles worker/main.ts with every package it uses, so the image needs Node and nothing from
 * npm. `node worker/bundle.ts <outfile>` (Node 24 strips the types).
 */

const ROOT = path.resolve(import.meta.dirname, "..");

/** ES module output; the CommonJS packages inside it (pino, tar-stream) get a `require`. */
const BANNER = `import { createRequire as __workerCreateRequire } from "node:module";
const require = __workerCreateRequire(import.meta.url);`;

export async function bundleWorker(outfile: string): Promise<void> {
  await build({
    entryPoints: [path.join(ROOT, "worker/main.ts")],
    outfile,
    bundle: true,
    platform: "node",
    target: "node24",
    format: "esm",
    banner: { js: BANNER },
    sourcemap: "inline",
    legalComments: "none",
    logLevel: "warning",
  });
}

if (import.meta.main) await bundleWorker(path.resolve(process.argv[2] ?? "dist/worker.mjs"));
