import { prepared, type Queryable } from "../db/pool.ts";
import { type FileVersion, newest_change_in_view, type View } from "./view.ts";

/** One entry of a folder: a subfolder or a file, with the newest commit in the view that touched it. */
export interface FolderEntry {
  kind: "folder" | "file";
  /** The entry's name inside the folder (one segment). */
  name: string;
  /** The entry's path from the repo's root (a folder's without a trailing `/`). */
  path: string;
  /** The newest commit of the view that changed this file, or any path under this folder. */
  commit: { sequence: number; message: string; author: string; created_at: Date };
  /** Files only: the size in bytes. */
  size: number | null;
}

/** How many of the view's newest changes a page reads to find its folders' last commits. */
const RECENT_CHANGES = 1000;

/**
 * The children of the folder `$6` (a prefix ending in `/`, or "" for the root) in a view, walked
 * as a skip scan over the (branch_id, path, sequence) primary key of file_changes: each step jumps
 * to the next changed path at or after `from_path` in the branch's own layer and in main's, takes
 * the smaller, and either
 *  - meets a file directly in the folder: resolves it (one probe per layer, as tree_page does),
 *    keeps it if present and steps to the next path (`path || chr(1)` is the least text after
 *    `path`: text holds no NUL), or
 *  - meets a path in a subfolder `d`: keeps `d` if that first path under it is present, else if
 *    any is (one tree_page call, limit 1), and jumps over the whole subfolder to `d || '0'` (`0`
 *    follows `/` in byte order).
 * So a page of a folder costs about (entries shown + subfolders skipped) x a few probes, whatever the
 * size of the repo or the length of its history. `$9` (folders only) filters out direct files inside
 * the index scan, so the folders of a folder with 10,000 files are found without a step per file.
 * The walk stops after `$10` entries. `$8` bounds every scan to the folder (an index condition,
 * in a generic plan too: the statement is prepared once per connection, since planning it cost
 * more than running it, 1.5 ms against 1 ms for a page of 100 files).
 *
 * Per entry, the newest commit that touched it: a file's is the sequence of the row the view shows
 * (the branch's own rows are always newer than the main rows under them: own rows start after the
 * epoch's base); a folder's is the greatest sequence under it among the view's newest `$12`
 * changes (one backward scan of file_changes_by_commit per page, grouped by folder), and only for
 * a folder untouched in those, the greatest sequence under it in each layer: an index-only range
 * scan of the subtree's rows, which for a folder of 35,000 rows took 15 ms (docs/web.md, "Finding
 * one's way", has the plans and the figures).
 */
const folder_entries_select = prepared<FolderRow>(
  "folder_entries_select",
  `
  WITH RECURSIVE walk (from_path, kind, path, sha, seq, n, ord) AS (
    SELECT $7::text COLLATE "C", NULL::text, NULL::text COLLATE "C", NULL::bytea, NULL::bigint, 0, 0
    UNION ALL
    SELECT step.next_from, step.kind, step.path, step.sha, step.seq,
           w.n + (step.kind IS NOT NULL)::int, w.ord + 1
    FROM walk w
    CROSS JOIN LATERAL (
      SELECT least(
        (SELECT f.path FROM file_changes f
         WHERE f.branch_id = $1 AND f.path >= w.from_path AND f.path < $8::text
           AND f.sequence <= $2 AND f.sequence + 0 >= $5
           AND (NOT $9::boolean OR strpos(substr(f.path, length($6::text) + 1), '/') > 0)
         ORDER BY f.path LIMIT 1),
        (SELECT f.path FROM file_changes f
         WHERE f.branch_id = $3 AND f.path >= w.from_path AND f.path < $8::text
           AND f.sequence <= $4
           AND (NOT $9::boolean OR strpos(substr(f.path, length($6::text) + 1), '/') > 0)
         ORDER BY f.path LIMIT 1)) AS next_path
      OFFSET 0
    ) nx
    CROSS JOIN LATERAL (
      SELECT CASE WHEN strpos(substr(nx.next_path, length($6::text) + 1), '/') > 0
                  THEN $6::text || split_part(substr(nx.next_path, length($6::text) + 1), '/', 1) END AS folder
      OFFSET 0
    ) d
    LEFT JOIN LATERAL (
      SELECT v.content_sha256, v.sequence FROM (
        (SELECT f.content_sha256, f.sequence, 0 AS layer FROM file_changes f
         WHERE f.branch_id = $1 AND f.path = nx.next_path AND f.sequence <= $2 AND f.sequence + 0 >= $5
         ORDER BY f.sequence DESC LIMIT 1)
        UNION ALL
        (SELECT f.content_sha256, f.sequence, 1 AS layer FROM file_changes f
         WHERE f.branch_id = $3 AND f.path = nx.next_path AND f.sequence <= $4
         ORDER BY f.sequence DESC LIMIT 1)) v
      ORDER BY v.layer LIMIT 1
    ) fv ON d.folder IS NULL OR $9::boolean
    CROSS JOIN LATERAL (
      SELECT (CASE WHEN d.folder IS NOT NULL THEN d.folder || '0' ELSE nx.next_path || chr(1) END) COLLATE "C" AS next_from,
        CASE
          WHEN d.folder IS NULL THEN CASE WHEN fv.content_sha256 IS NOT NULL THEN 'file' END
          WHEN NOT $9::boolean THEN NULL
          WHEN fv.content_sha256 IS NOT NULL THEN 'folder'
          WHEN EXISTS (SELECT 1 FROM tree_page($1, $5, $2, $3, $4, d.folder || '/', 1) t
                       WHERE starts_with(t.path, d.folder || '/')) THEN 'folder'
        END AS kind,
        coalesce(d.folder, nx.next_path) COLLATE "C" AS path,
        CASE WHEN d.folder IS NULL THEN fv.content_sha256 END AS sha,
        CASE WHEN d.folder IS NULL THEN fv.sequence END AS seq
    ) step
    WHERE nx.next_path IS NOT NULL AND w.n < $10
  ),
  recent AS MATERIALIZED (
    SELECT f.path, f.sequence FROM file_changes f
    WHERE f.repo_id = $11 AND f.sequence <= $2
      AND ((f.branch_id = $1 AND f.sequence >= $5) OR (f.branch_id = $3 AND f.sequence <= $4))
    ORDER BY f.sequence DESC LIMIT $12
  ),
  recent_by_folder AS MATERIALIZED (
    SELECT $6::text || split_part(substr(r.path, length($6::text) + 1), '/', 1) AS path, max(r.sequence) AS seq
    FROM recent r
    WHERE starts_with(r.path, $6::text) AND strpos(substr(r.path, length($6::text) + 1), '/') > 0
    GROUP BY 1
  )
  SELECT w.kind, w.path, c.sequence, c.message, c.author, c.created_at, ct.size
  FROM walk w
  CROSS JOIN LATERAL (
    SELECT coalesce(w.seq, (SELECT rf.seq FROM recent_by_folder rf WHERE rf.path = w.path),
      (SELECT max(f.sequence) FROM file_changes f
       WHERE f.branch_id = $1 AND f.path >= w.path || '/' AND f.path < w.path || '0'
         AND f.sequence <= $2 AND f.sequence >= $5),
      (SELECT max(f.sequence) FROM file_changes f
       WHERE f.branch_id = $3 AND f.path >= w.path || '/' AND f.path < w.path || '0' AND f.sequence <= $4)) AS sequence
  ) last
  CROSS JOIN LATERAL (
    SELECT c.sequence, c.message, c.author, c.created_at FROM commits c
    WHERE c.repo_id = $11 AND c.sequence = last.sequence LIMIT 1
  ) c
  LEFT JOIN LATERAL (
    SELECT ct.size FROM contents ct WHERE ct.repo_id = $11 AND ct.sha256 = w.sha LIMIT 1
  ) ct ON true
  WHERE w.kind IS NOT NULL
  ORDER BY w.ord`,
);

interface FolderRow {
  kind: "folder" | "file";
  path: string;
  sequence: number;
  message: string;
  author: string;
  created_at: Date;
  size: number | null;
}

/**
 * Text after every valid path: paths are UTF-8 of at most 1,024 bytes (docs/names.md), and U+10FFFF
 * (F4 8F BF BF) is the greatest character, so 257 of them sort after any path byte by byte.
 */
const PAST_EVERY_PATH = "\u{10FFFF}".repeat(257);

/** The least text that sorts after every path under `folder` ("" is the root). */
const folderUpperBound = (folder: string): string =>
  folder === "" ? PAST_EVERY_PATH : `${folder.slice(0, -1)}0`;

async function walkFolder(
  db: Queryable,
  repoId: number,
  view: View,
  q: { folder: string; from: string; foldersOnly: boolean; limit: number },
): Promise<FolderEntry[]> {
  const { rows } = await db.query(
    folder_entries_select([
      view.branch.id,
      view.at,
      view.parentId,
      view.parentAt,
      view.ownFrom,
      q.folder,
      q.from,
      folderUpperBound(q.folder),
      q.foldersOnly,
      q.limit,
      repoId,
      RECENT_CHANGES,
    ]),
  );
  return rows.map((r) => ({
    kind: r.kind,
    name: r.path.slice(q.folder.length),
    path: r.path,
    commit: { sequence: r.sequence, message: r.message, author: r.author, created_at: r.created_at },
    size: r.size === null ? null : Number(r.size),
  }));
}

/**
 * A page of a folder's entries in a view, folders first then files, each group in byte order.
 * `after` is the last entry of the previous page: a folder's path with a trailing `/`, or a
 * file's path. `next` is the cursor of the following page, if there is one.
 */
export async function readFolder(
  db: Queryable,
  repoId: number,
  view: View,
  q: { folder: string; after?: string | undefined; limit: number },
): Promise<{ entries: FolderEntry[]; next: string | null }> {
  const folder = q.folder === "" ? "" : `${q.folder}/`;
  const after = q.after?.startsWith(folder) ? q.after : undefined;
  const inFolders = after === undefined || after.endsWith("/");
  // In the folders' pages the first files are read at the same time (another connection), not
  // after: a page that ends in its folders wastes at most a page of files, and a page that reaches
  // the files costs one round trip instead of two.
  const files = walkFolder(db, repoId, view, {
    folder,
    from: inFolders ? folder : `${after}\u0001`,
    foldersOnly: false,
    limit: q.limit + 1,
  });
  const folders = inFolders
    ? walkFolder(db, repoId, view, {
        folder,
        from: after === undefined ? folder : `${after.slice(0, -1)}0`,
        foldersOnly: true,
        limit: q.limit + 1,
      })
    : [];
  const [folderEntries, fileEntries] = await Promise.all([folders, files]);
  const entries = [...folderEntries, ...fileEntries];
  const page = entries.slice(0, q.limit);
  const last = page.at(-1);
  const next =
    entries.length > q.limit && last ? (last.kind === "folder" ? `${last.path}/` : last.path) : null;
  return { entries: page, next };
}

/** A folder's README, in this order of preference when it has several (names compared case-insensitively). */
const README_NAMES = ["readme.md", "readme.markdown", "readme", "readme.txt"];

// The READMEs of the folder `$5` present in a view, with their versions: two narrow range scans
// for the candidates (names starting with `R` or `r`, whatever the folder's size; rows of subfolders
// whose names start with R are read too, and left out by the name test), then each one resolved in
// the view as filesInView does.
const folder_readmes_select = `
  SELECT p.path, v.content_sha256, v.content_type, v.is_binary
  FROM (SELECT DISTINCT f.path FROM file_changes f
        WHERE f.branch_id IN ($1, $3)
          AND ((f.path >= $5::text || 'R' AND f.path < $5::text || 'S') OR (f.path >= $5::text || 'r' AND f.path < $5::text || 's'))
          AND lower(substr(f.path, length($5::text) + 1)) = ANY ($7::text[])) p
  CROSS JOIN ${newest_change_in_view}
  WHERE v.content_sha256 IS NOT NULL`;

/** The README shown under a folder in a view, with its version, if the folder has one. */
export async function folderReadme(
  db: Queryable,
  view: View,
  folder: string,
): Promise<({ path: string } & FileVersion) | null> {
  const prefix = folder === "" ? "" : `${folder}/`;
  const { rows } = await db.query<{ path: string } & FileVersion>(folder_readmes_select, [
    view.branch.id,
    view.at,
    view.parentId,
    view.parentAt,
    prefix,
    view.ownFrom,
    README_NAMES,
  ]);
  const rank = (path: string) => README_NAMES.indexOf(path.slice(prefix.length).toLowerCase());
  return rows.sort((a, b) => rank(a.path) - rank(b.path) || (a.path < b.path ? -1 : 1))[0] ?? null;
}
