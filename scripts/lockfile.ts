import { readFile } from "node:fs/promises";
import path from "node:path";

/**
 * The `package-lock.json` of a built folder (docs/build.md, "Pinned installs"): the root lock's
 * entries for the folder's dependency closure, at the same paths, so Cloud Build's `npm ci` (and
 * the image's) installs exactly the versions the tests ran against. Made from the root lock alone,
 * without the network.
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const ROOT_LOCK = path.join(ROOT, "package-lock.json");
/** Where the packages come from in the cloud (npm's default registry, as Cloud Build uses it). */
const REGISTRY = "https://registry.npmjs.org";

export interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  name?: string;
  link?: boolean;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

export interface Lockfile {
  name: string;
  version?: string;
  lockfileVersion: number;
  requires?: boolean;
  packages: Record<string, LockEntry>;
}

export async function readRootLock(): Promise<Lockfile> {
  return JSON.parse(await readFile(ROOT_LOCK, "utf8")) as Lockfile;
}

/**
 * The lock entry `name` resolves to when required from the package installed at `from` ("" for
 * the folder itself), by Node's lookup: `from/node_modules/name`, then each enclosing
 * `node_modules`, up to the top.
 */
export function resolveIn(
  packages: Record<string, LockEntry>,
  from: string,
  name: string,
): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (candidate in packages) return candidate;
    if (dir === "") return undefined;
    const up = dir.lastIndexOf("/node_modules/");
    dir = up === -1 ? "" : dir.slice(0, up);
  }
}

/** The names an installed package requires: its dependencies, optional ones, and required peers. */
function requiredNames(entry: LockEntry): { name: string; optional: boolean }[] {
  const optionalPeer = (n: string) => entry.peerDependenciesMeta?.[n]?.optional === true;
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...Object.keys(entry.peerDependencies ?? {})
      .filter((n) => !optionalPeer(n))
      .map((name) => ({ name, optional: false })),
  ];
}

/** The registry tarball of an entry, as npm records it in `resolved`. */
function tarballUrl(key: string, entry: LockEntry): string {
  const name = entry.name ?? key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
  const base = name.includes("/") ? name.slice(name.indexOf("/") + 1) : name;
  return `${REGISTRY}/${name}/-/${base}-${entry.version}.tgz`;
}

/**
 * The lock of a folder whose package.json is `manifest`: every root-lock entry reachable from the
 * manifest's dependencies (optional ones that the root lock does not hold, such as other
 * platforms' binaries, are left out, as npm leaves them out of the root lock). Throws when a
 * required package is missing from the root lock: the folder would install an untested version.
 */
export function lockFor(
  root: Lockfile,
  manifest: { name: string; version?: string; dependencies: Record<string, string> },
): Lockfile {
  const source = root.packages;
  const picked = new Map<string, LockEntry>();
  const visit = (from: string, wanted: { name: string; optional: boolean }[]) => {
    for (const { name, optional } of wanted) {
      const key = resolveIn(source, from, name);
      if (key === undefined) {
        if (optional) continue;
        throw new Error(`package-lock.json has no entry for ${name} (required by ${from || manifest.name})`);
      }
      if (picked.has(key)) continue;
      const entry = source[key] as LockEntry;
      picked.set(key, entry);
      visit(key, requiredNames(entry));
    }
  };
  visit(
    "",
    Object.keys(manifest.dependencies).map((name) => ({ name, optional: false })),
  );
  const packages: Record<string, LockEntry> = {
    "": {
      name: manifest.name,
      ...(manifest.version ? { version: manifest.version } : {}),
      dependencies: manifest.dependencies,
    },
  };
  for (const key of [...picked.keys()].sort())
    packages[key] = shippedEntry(key, picked.get(key) as LockEntry);
  return { name: manifest.name, lockfileVersion: 3, requires: true, packages };
}

/**
 * An entry as the folder's lock holds it: the root's, with `resolved` filled in and without the
 * root's dev flags (nothing in a folder is a dev dependency; `devOptional` there means optional).
 */
function shippedEntry(key: string, entry: LockEntry): LockEntry {
  const { dev: _dev, devOptional, peer: _peer, ...rest } = entry;
  const resolved = rest.resolved ?? (rest.link ? undefined : tarballUrl(key, entry));
  return {
    ...(rest.version ? { version: rest.version } : {}),
    ...(resolved ? { resolved } : {}),
    ...rest,
    ...(devOptional ? { optional: true } : {}),
  };
}

/** The lock as npm writes it: two-space JSON with a final newline. */
export function lockText(lock: Lockfile): string {
  return `${JSON.stringify(lock, null, 2)}\n`;
}
