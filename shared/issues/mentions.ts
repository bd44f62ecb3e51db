import type { RepoAccess } from "../access/roles.ts";
import type { MentionsResponse } from "../api/issues.ts";
import type { Queryable } from "../db/pool.ts";
import { type IssueRecord, issuesNumbered } from "./issues.ts";
import { issueNumbersLinkedTo, linksOf } from "./links.ts";

/**
 * `#12` as a reference: not glued to a word, an `&` (an HTML entity like `&#12;`), a `/` (a URL's
 * fragment) or another `#` (a Markdown heading is `# `, so `##12` is no reference); and not followed
 * by a letter, digit or `_`. The same rule in SQL (a POSIX regex, below) and in JavaScript.
 */
export const mentionPattern = /(^|[^\p{L}\p{N}_&/#])#([1-9]\d{0,14})(?![\p{L}\p{N}_])/gu;

/** The numbers `text` refers to, each once. */
export const mentionedNumbers = (text: string): number[] => [
  ...new Set(Array.from(text.matchAll(mentionPattern), (m) => Number(m[2]))),
];

/**
 * The other direction: the issues that `texts` (a commit's message, a proposal's title and
 * description) refer to, and those linked by hand to `target`, by number. Numbers that are
 * proposals or nothing are left out.
 */
export async function issuesMentionedBy(
  db: Queryable,
  access: RepoAccess,
  texts: string[],
  target: { sequence: number } | { proposal: string },
): Promise<IssueRecord[]> {
  const linked = await issueNumbersLinkedTo(db, access, target);
  const numbers = [...new Set([...mentionedNumbers(texts.join("\n")), ...linked])];
  return numbers.length === 0 ? [] : issuesNumbered(db, access, numbers);
}

const sqlPattern = (number: number) => `(^|[^[:alnum:]_&/#])#${number}($|[^[:alnum:]_])`;

// "Mentioned in" is computed when read, not indexed when written: the writes that mention (a
// commit, a proposal, an issue, a comment) stay as they are, and nothing can go stale when a
// proposal's description or a comment is edited. Each query is bounded by the repo (the leading
// column of the commits primary key, and of the proposals and issues indexes); docs/issues.md.
const mentioning_commits = `
  SELECT c.sequence, b.name AS branch, c.message, c.author, c.created_at
  FROM commits c JOIN branches b ON b.id = c.branch_id
  WHERE c.repo_id = $1 AND (c.message ~ $2 OR c.sequence IN (
    SELECT commit_sequence FROM issue_refs WHERE issue_id = $3 AND commit_sequence IS NOT NULL))
  ORDER BY c.sequence`;
const mentioning_proposals = `
  SELECT id::text, number, title, state, created_at FROM proposals
  WHERE repo_id = $1 AND (title ~ $2 OR description ~ $2 OR id IN (
    SELECT proposal_id FROM issue_refs WHERE issue_id = $3 AND proposal_id IS NOT NULL))
  ORDER BY number`;
const mentioning_issues = `
  SELECT i.number, i.title, i.state FROM issues i
  WHERE i.repo_id = $1 AND i.number <> $3 AND (i.title ~ $2 OR i.body ~ $2
    OR EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND c.body ~ $2))
  ORDER BY i.number`;

interface CommitRow {
  sequence: number;
  branch: string;
  message: string;
  author: string;
  created_at: Date;
}
interface ProposalRow {
  id: string;
  number: number;
  title: string;
  state: string;
  created_at: Date;
}

/**
 * The commits, proposals and other issues (or their comments) of the repo that write `#number`;
 * `refs` lists the commits and proposals again in the origin system's shape (`ref_type`, `ref_id`:
 * a commit's sequence or a proposal's id), so its clients read them. Computed refs have no row of
 * their own: their `id` names what they point at, their `created_at` is that thing's.
 */
export async function mentionsOf(
  db: Queryable,
  access: RepoAccess,
  issue: IssueRecord,
): Promise<MentionsResponse> {
  const args = [access.repo.id, sqlPattern(issue.number), issue.id];
  const [commits, proposals, issues, links] = await Promise.all([
    db.query<CommitRow>(mentioning_commits, args),
    db.query<ProposalRow>(mentioning_proposals, args),
    db.query(mentioning_issues, [access.repo.id, sqlPattern(issue.number), issue.number]),
    linksOf(db, access, issue),
  ]);
  // A target both written as `#n` and linked by hand is listed once, as its link (a real row).
  const linked = new Map(links.map((l) => [`${l.ref_type}:${l.ref_id}`, l]));
  const ref = (ref_type: "commit" | "proposal", ref_id: string, created_at: Date) =>
    linked.get(`${ref_type}:${ref_id}`) ?? {
      id: `${ref_type}:${ref_id}`,
      issue_id: issue.id,
      repo: access.repo.name,
      ref_type,
      ref_id,
      created_at,
    };
  return {
    commits: commits.rows.map(({ sequence, branch, message, author }) => ({
      sequence,
      branch,
      message,
      author,
    })),
    proposals: proposals.rows.map(({ number, title, state }) => ({ number, title, state })),
    issues: issues.rows,
    refs: [
      ...commits.rows.map((c) => ref("commit", String(c.sequence), c.created_at)),
      ...proposals.rows.map((p) => ref("proposal", p.id, p.created_at)),
    ],
  };
}
