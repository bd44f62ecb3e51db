import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The module `name` beside the module at `url` (its `import.meta.url`), with that module's own
 * extension: `.ts` when Quire runs from its sources (tsx, vitest, Node's type stripping), `.js` in
 * a bundle, where the build puts such an entry beside its caller's mirrored location
 * (scripts/bundle-options.ts). For the files Quire starts apart: a worker thread, a child process.
 */
export function siblingModule(url: string, name: string): URL {
  return new URL(`./${name}${path.extname(fileURLToPath(url))}`, url);
}
