import { isPlausibleEmail } from "../auth/email.ts";
import type { BlobStore } from "../blobs/store.ts";
import { loadBodyUpTo } from "../commits/content.ts";
import { filesInView, type View } from "../commits/view.ts";
import type { Queryable } from "../db/pool.ts";

/** The name of an owners file; it governs its own folder and every folder below (docs/owners.md). */
const OWNERS_FILE = "OWNERS";
/** An OWNERS file larger than this is not read at all (reported as one invalid line). */
const MAX_OWNERS_BYTES = 64 * 1024;
/** How much of an invalid line the status repeats. */
const SHOWN_LINE = 120;

/** A line of an OWNERS file that is neither an email, a comment nor blank: ignored, and reported. */
export interface InvalidOwnersLine {
  file: string;
  line: number;
  text: string;
}

/**
 * The owners that govern a branch's changed paths: `owners` maps the folder prefix of each OWNERS
 * file on an ancestor folder of a changed path (`""` for the root, `docs/`) to its emails, the
 * policy input's `owners` as the origin system passes it. A file with no valid email is left out,
 * so its parent's owners govern.
 */
export interface OwnersOfChanges {
  owners: Record<string, string[]>;
  invalid: InvalidOwnersLine[];
}

/**
 * An invalid line as the status repeats it: cut short, and with control and invisible characters
 * replaced, so that a terminal printing it (`quire branches status`) obeys none of them.
 */
const shown = (line: string) =>
  line
    .slice(0, SHOWN_LINE)
    .toWellFormed()
    .replace(/[\p{Cc}\p{Cf}]/gu, "\uFFFD");

/** The emails of one OWNERS file (lower case, each once) and its invalid lines, 1-based. */
export function parseOwnersFile(text: string): {
  emails: string[];
  invalid: { line: number; text: string }[];
} {
  const emails = new Set<string>();
  const invalid: { line: number; text: string }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    if (isPlausibleEmail(line)) emails.add(line.toLowerCase());
    else invalid.push({ line: i + 1, text: shown(line) });
  });
  return { emails: [...emails], invalid };
}

/** The folder prefixes above `path`, root first: `a/b/c.md` gives `""`, `a/`, `a/b/`. */
export function folderPrefixes(path: string): string[] {
  const prefixes = [""];
  for (let slash = path.indexOf("/"); slash >= 0; slash = path.indexOf("/", slash + 1))
    prefixes.push(path.slice(0, slash + 1));
  return prefixes;
}

/** The longest prefix of `owners` that `path` starts with (the one that governs it), or null. */
export function governingPrefix(owners: Record<string, string[]>, path: string): string | null {
  let best: string | null = null;
  for (const prefix of Object.keys(owners))
    if (path.startsWith(prefix) && (best === null || prefix.length > best.length)) best = prefix;
  return best;
}

/**
 * The OWNERS files of `view` (main at its head) on the ancestor folders of `paths`: one query finds
 * which exist, then only those are read. Paths are unique and sorted so the result is stable.
 */
export async function readOwners(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  view: View,
  paths: string[],
): Promise<OwnersOfChanges> {
  const prefixes = [...new Set(paths.flatMap(folderPrefixes))].sort();
  const files = await filesInView(
    db,
    view,
    prefixes.map((p) => p + OWNERS_FILE),
  );
  const result: OwnersOfChanges = { owners: {}, invalid: [] };
  // One after another: `db` may be a transaction's client, which runs one query at a time.
  for (const prefix of prefixes) {
    const file = prefix + OWNERS_FILE;
    const version = files.get(file);
    if (!version) continue;
    const body = await loadBodyUpTo(db, blobs, repoId, version.content_sha256, MAX_OWNERS_BYTES);
    if (body === null) {
      result.invalid.push({ file, line: 0, text: `larger than ${MAX_OWNERS_BYTES} bytes: not read` });
      continue;
    }
    const { emails, invalid } = parseOwnersFile(body.toString("utf8"));
    if (emails.length > 0) result.owners[prefix] = emails;
    result.invalid.push(...invalid.map((l) => ({ file, ...l })));
  }
  return result;
}

/** A changed path that has owners: who they are (from `prefix`'s file) and which of them approved the head. */
export interface PathOwners {
  path: string;
  prefix: string;
  owners: string[];
  approved_by: string[];
}

/** Each of `paths` that has owners, with the owners among `approvers` (those who approved the head). */
export function pathOwners(
  owners: Record<string, string[]>,
  paths: string[],
  approvers: Set<string>,
): PathOwners[] {
  return paths.flatMap((path) => {
    const prefix = governingPrefix(owners, path);
    if (prefix === null) return [];
    const emails = owners[prefix] ?? [];
    return [{ path, prefix, owners: emails, approved_by: emails.filter((e) => approvers.has(e)) }];
  });
}
