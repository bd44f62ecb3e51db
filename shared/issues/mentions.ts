import type { RepoAccess } from "../access/roles.ts";
import type { MentionsResponse } from "../api/issues.ts";
import type { Queryable } from "../db/pool.ts";

/**
 * `#12` as a reference: not glued to a word, an `&` (an HTML entity like `&#12;`), a `/` (a URL's
 * fragment) or another `#` (a Markdown heading is `# `, so `##12` is no reference); and not followed
 * by a letter, digit or `_`. The same rule in SQL (a POSIX regex, below) and in JavaScript.
 */
export const mentionPattern = /(^|[^\p{L}\p{N}_&/#])#([1-9]\d{0,14})(?![\p{L}\p{N}_])/gu;

const sqlPattern = (number: number) => `(^|[^[:alnum:]_&/#])#${number}($|[^[:alnum:]_])`;

// "Mentioned in" is computed when read, not indexed when written: the writes that mention (a
// commit, a proposal, an issue, a comment) stay as they are, and nothing can go stale when a
// proposal's description or a comment is edited. Each query is bounded by the repo (the leading
// column of the commits primary key, and of the proposals and issues indexes); docs/issues.md.
const mentioning_commits = `
  SELECT c.sequence, b.name AS branch, c.message, c.author
  FROM commits c JOIN branches b ON b.id = c.branch_id
  WHERE c.repo_id = $1 AND c.message ~ $2 ORDER BY c.sequence`;
const mentioning_proposals = `
  SELECT number, title, state FROM proposals
  WHERE repo_id = $1 AND (title ~ $2 OR description ~ $2) ORDER BY number`;
const mentioning_issues = `
  SELECT i.number, i.title, i.state FROM issues i
  WHERE i.repo_id = $1 AND i.number <> $3 AND (i.title ~ $2 OR i.body ~ $2
    OR EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND c.body ~ $2))
  ORDER BY i.number`;

/** The commits, proposals and other issues (or their comments) of the repo that write `#number`. */
export async function mentionsOf(
  db: Queryable,
  access: RepoAccess,
  number: number,
): Promise<MentionsResponse> {
  const args = [access.repo.id, sqlPattern(number)];
  const [commits, proposals, issues] = await Promise.all([
    db.query(mentioning_commits, args),
    db.query(mentioning_proposals, args),
    db.query(mentioning_issues, [...args, number]),
  ]);
  return { commits: commits.rows, proposals: proposals.rows, issues: issues.rows };
}
