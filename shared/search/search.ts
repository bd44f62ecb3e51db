import { z } from "zod";
import type { Body } from "../commits/content.ts";
import { newest_change_in_view, type View, viewParams } from "../commits/view.ts";
import type { Queryable } from "../db/pool.ts";

/**
 * Search of file contents and the file finder (docs/search.md). Contents are indexed once per
 * repo by their hash in `search_texts` (a pg_trgm GIN index); a query finds the matching
 * contents through that index and only then keeps the paths whose version in the view being
 * read is one of them, so no query reads the bodies of a whole tree.
 */

/** Text bodies above this size are not indexed (and so not found); the migration's backfill agrees. */
export const MAX_INDEXED_BYTES = 262_144;
export const MAX_TERM_CHARS = 200;
/** Lines shown per file; the rest are counted. */
export const LINES_PER_FILE = 5;
/** Characters of a long line shown around its first match. */
const LINE_WINDOW = 240;

/**
 * Why a search term cannot be searched, or null. A trigram index serves `ILIKE '%term%'` only
 * through a run of three letters or digits in the term (pg_trgm's words); without one every
 * indexed text would be read, so such a term is refused instead.
 */
export function searchTermProblem(term: string): string | null {
  if (term.trim() === "") return "type something to search for";
  if (term.length > MAX_TERM_CHARS) return `a search is at most ${MAX_TERM_CHARS} characters`;
  if (/[\r\n]/.test(term)) return "a search is one line";
  if (!/[\p{L}\p{N}]{3}/u.test(term)) return "a search needs at least three letters or digits in a row";
  return null;
}

/** The API's `q` of a search (the same rules as the page's). */
export const searchTerm = z.string().superRefine((term, ctx) => {
  const problem = searchTermProblem(term);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** `text` with LIKE's wildcards and escape character made literal. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
const containing = (text: string) => `%${likeLiteral(text)}%`;
/** Every character of `text` in order, anything between: the finder's fuzzy match. */
const subsequence = (text: string) => `%${[...text].map(likeLiteral).join("%")}%`;

/**
 * Whether search indexes a body's text (in the commit's transaction, by `insertBodies`): not when
 * it is binary (so not UTF-8), above MAX_INDEXED_BYTES, or holds a NUL byte (which PostgreSQL's
 * text cannot hold; `isBinary` looks for NUL in the first 8,000 bytes only).
 */
export function isSearchable(body: Body): boolean {
  return !body.binary && body.data.length <= MAX_INDEXED_BYTES && !body.data.includes(0);
}

// $7 the term as a literal regular expression (`***=`, matched case-insensitively by ~*, which
// the trigram index serves and which checks a text several times faster than ILIKE), $8 the last
// path of the previous page, $9 the page size (+1, to know of a next), $10 MAX_CANDIDATES.
// `hits` (search_hits, migration 0011: through the trigram index only) is materialized so the
// index is read once, and capped so that a term in every file reads at most MAX_CANDIDATES texts.
// Each hit's paths come from file_changes_by_content, and the lateral keeps a path only if its
// version in the view is the hit; the bodies are read for the page's paths alone. `+ 0` on the
// branch and sequence leaves file_changes_by_content the only index for the hits' paths: through
// file_changes_by_commit a fresh table's planner read every change of the repo once per hit
// (6.4 s for 1,000 hits).
const search_hits_select = `
  WITH hits AS MATERIALIZED (
    SELECT h.sha256 FROM search_hits($5, $7, $10) h
  ), placed AS (
    SELECT DISTINCT f.path, f.content_sha256 AS sha256 FROM hits h
    JOIN file_changes f ON f.repo_id = $5 AND f.content_sha256 = h.sha256
    WHERE ((f.branch_id + 0 = $1 AND f.sequence + 0 BETWEEN $6 AND $2) OR (f.branch_id + 0 = $3 AND f.sequence + 0 <= $4))
      AND f.path > $8
  )
  SELECT page.path, t.body, (SELECT count(*) FROM hits)::int AS candidates FROM (
    SELECT p.path, p.sha256 FROM placed p CROSS JOIN ${newest_change_in_view}
    WHERE v.content_sha256 = p.sha256
    ORDER BY p.path LIMIT $9
  ) page JOIN search_texts t ON t.repo_id = $5 AND t.sha256 = page.sha256
  ORDER BY page.path`;

/** A part of a shown line: text, and whether it is the searched term. */
export type LinePart = { text: string; match: boolean };
export interface MatchingLine {
  /** 1-based, as the file page's `#L<n>` anchors. */
  number: number;
  parts: LinePart[];
}
export interface SearchHit {
  path: string;
  lines: MatchingLine[];
  /** Every matching line of the file, shown or not. */
  lineCount: number;
}

/** Distinct matching contents a search considers; a term found in more is answered from these. */
export const MAX_CANDIDATES = 1_000;

export interface SearchPage {
  hits: SearchHit[];
  /** A next page exists (after the last hit's path). */
  more: boolean;
  /** More than MAX_CANDIDATES contents of the repo match: the pages are drawn from some of them. */
  capped: boolean;
}

/**
 * Paths (after `after`, in byte order) whose text in the view contains `term`, case-insensitively,
 * with their matching lines.
 */
export async function searchInView(
  db: Queryable,
  repoId: number,
  view: View,
  q: { term: string; after?: string | undefined; limit: number },
): Promise<SearchPage> {
  const { rows } = await db.query<{ path: string; body: string; candidates: number }>(search_hits_select, [
    ...viewParams(view, repoId),
    `***=${q.term}`,
    q.after ?? "",
    q.limit + 1,
    MAX_CANDIDATES,
  ]);
  const hits = rows.slice(0, q.limit).map((r) => ({ path: r.path, ...matchingLines(r.body, q.term) }));
  return { hits, more: rows.length > q.limit, capped: (rows[0]?.candidates ?? 0) >= MAX_CANDIDATES };
}

/** The lines of `body` holding `term` (case-insensitive), the first LINES_PER_FILE with it marked. */
export function matchingLines(body: string, term: string): { lines: MatchingLine[]; lineCount: number } {
  const pattern = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "giu");
  const lines: MatchingLine[] = [];
  let lineCount = 0;
  body.split("\n").forEach((line, i) => {
    pattern.lastIndex = 0;
    if (!pattern.test(line)) return;
    lineCount++;
    if (lines.length < LINES_PER_FILE) lines.push({ number: i + 1, parts: markedParts(line, pattern) });
  });
  return { lines, lineCount };
}

/** A line cut to LINE_WINDOW characters around its first match, split at each match. */
function markedParts(line: string, pattern: RegExp): LinePart[] {
  pattern.lastIndex = 0;
  const first = pattern.exec(line)?.index ?? 0;
  const start = Math.max(0, Math.min(first - LINE_WINDOW / 4, line.length - LINE_WINDOW));
  const shown = line.slice(start, start + LINE_WINDOW);
  const parts: LinePart[] = [];
  let at = 0;
  // matchAll starts where the pattern's lastIndex is: after the exec above.
  pattern.lastIndex = 0;
  for (const m of shown.matchAll(pattern)) {
    if (m.index > at) parts.push({ text: shown.slice(at, m.index), match: false });
    parts.push({ text: m[0], match: true });
    at = m.index + m[0].length;
  }
  if (at < shown.length) parts.push({ text: shown.slice(at), match: false });
  if (start > 0) parts.unshift({ text: "…", match: false });
  if (start + LINE_WINDOW < line.length) parts.push({ text: "…", match: false });
  return parts;
}

// $7 the fuzzy pattern (every character in order), $8 the term as a substring, $9 the limit.
// Ranked: the term in the file's name, then in its path, then shorter paths first.
const find_paths_select = `
  WITH named AS (
    SELECT DISTINCT f.path FROM file_changes f
    WHERE f.repo_id = $5
      AND ((f.branch_id = $1 AND f.sequence BETWEEN $6 AND $2) OR (f.branch_id = $3 AND f.sequence <= $4))
      AND f.path ILIKE $7
  )
  SELECT p.path FROM named p CROSS JOIN ${newest_change_in_view}
  WHERE v.content_sha256 IS NOT NULL
  ORDER BY substring(p.path FROM '[^/]*$') ILIKE $8 DESC, p.path ILIKE $8 DESC, length(p.path), p.path
  LIMIT $9`;

export const MAX_FINDER_CHARS = 256;

/**
 * The finder (GitHub's `t`): paths of the view holding every character of `term` in order,
 * case-insensitively, best first (the term whole in the file's name, then in the path, then the
 * shorter path), at most `limit` of them, with whether there were more.
 */
export async function findPathsInView(
  db: Queryable,
  repoId: number,
  view: View,
  q: { term: string; limit: number },
): Promise<{ paths: string[]; more: boolean }> {
  const { rows } = await db.query<{ path: string }>(find_paths_select, [
    ...viewParams(view, repoId),
    subsequence(q.term),
    containing(q.term),
    q.limit + 1,
  ]);
  return { paths: rows.slice(0, q.limit).map((r) => r.path), more: rows.length > q.limit };
}
