import type { BlobStore } from "../blobs/store.ts";
import { loadBody } from "../commits/content.ts";
import { treePageArgs, type View } from "../commits/view.ts";
import type { Queryable } from "../db/pool.ts";
import type { PolicySource } from "./engine.ts";

/** Where policies live in a repo. Only files directly in this folder count, not in sub-folders. */
export const POLICY_DIR = ".svc/policy/";
const EXTENSION = ".rego";
// Small pages: the walk stops at the first path past the folder, and every entry a page takes
// beyond it is wasted work on every merge and status (a page of 100 cost ~6 ms of database time).
const PAGE = 8;

const policy_tree_page = `
  SELECT path, content_sha256 FROM tree_page($1, $2, $3, $4, $5, $6, $7)`;

/**
 * The policy files of a view: every `<name>.rego` directly under `.svc/policy/`, sorted by name.
 *
 * It walks the tree from the folder's name with `tree_page` (paths in byte order, so the folder's
 * entries are contiguous) and stops at the first path outside it, so the cost is the folder, not
 * the repo. A sub-folder is skipped in one jump: every path under `sub/` sorts below `sub0`
 * (`/` is 0x2F, `0` is 0x30), so the next page starts after `sub0`, which itself cannot be a
 * `.rego` file.
 */
export async function readPolicySources(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  view: View,
): Promise<PolicySource[]> {
  // content_sha256 is the SHA-256 of the bytes (content addressing), so it is the cache key as is.
  const found: { name: string; sha256: Buffer }[] = [];
  let after = POLICY_DIR;
  for (;;) {
    const { rows } = await db.query(policy_tree_page, treePageArgs(view, after, PAGE));
    let next: string | null = rows.length === PAGE ? (rows[PAGE - 1].path as string) : null;
    for (const row of rows as { path: string; content_sha256: Buffer }[]) {
      if (!row.path.startsWith(POLICY_DIR)) {
        next = null;
        break;
      }
      const rest = row.path.slice(POLICY_DIR.length);
      const slash = rest.indexOf("/");
      if (slash >= 0) {
        next = `${POLICY_DIR}${rest.slice(0, slash)}0`;
        break;
      }
      if (rest.endsWith(EXTENSION) && rest.length > EXTENSION.length) {
        found.push({ name: rest.slice(0, -EXTENSION.length), sha256: row.content_sha256 });
      }
    }
    if (next === null) break;
    after = next;
  }
  found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // One after another: `db` may be a transaction's client, which runs one query at a time.
  const sources: PolicySource[] = [];
  for (const f of found)
    sources.push({ name: f.name, sha256: f.sha256, source: await loadBody(db, blobs, repoId, f.sha256) });
  return sources;
}
