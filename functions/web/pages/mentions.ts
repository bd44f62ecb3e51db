import type { Token } from "markdown-it";
import { mentionPattern } from "../../../shared/issues/mentions.ts";
import { type Html, html, trusted } from "../html.ts";
import * as u from "../urls.ts";
import { markdownIt } from "./markdown.ts";

/**
 * `#12` as a link to item 12 of the repo (docs/issues.md, "References"): the issue page, which
 * redirects a proposal's number to the proposal. The rule is shared/issues/mentions.ts's, so a
 * link is shown exactly where "mentioned in" finds one.
 */

type Piece = { text: string } | { number: number };

/** The text cut into plain runs and `#n` references. */
function pieces(text: string): Piece[] {
  const out: Piece[] = [];
  let from = 0;
  for (const m of text.matchAll(mentionPattern)) {
    const start = (m.index ?? 0) + (m[1] ?? "").length;
    if (start > from) out.push({ text: text.slice(from, start) });
    out.push({ number: Number(m[2]) });
    from = start + 1 + (m[2] ?? "").length;
  }
  if (from < text.length) out.push({ text: text.slice(from) });
  return out;
}

/** Plain text (a commit message, a proposal's description) with its `#n` linked. */
export const linkMentions = (repo: string, text: string): Html =>
  html`${pieces(text).map((p) =>
    "text" in p ? p.text : html`<a class="mention" href="${u.issueUrl(repo, p.number)}">#${p.number}</a>`,
  )}`;

/** Replaces the text tokens outside links with text and mention links. */
function linkTokens(
  children: Token[],
  repo: string,
  make: (type: string, tag: string, nesting: -1 | 0 | 1) => Token,
) {
  const out: Token[] = [];
  let inLink = 0;
  for (const token of children) {
    if (token.type === "link_open") inLink++;
    if (token.type === "link_close") inLink--;
    if (token.type !== "text" || inLink > 0) {
      out.push(token);
      continue;
    }
    for (const p of pieces(token.content)) {
      if ("text" in p) {
        const text = make("text", "", 0);
        text.content = p.text;
        out.push(text);
        continue;
      }
      const open = make("link_open", "a", 1);
      open.attrs = [
        ["class", "mention"],
        ["href", u.issueUrl(repo, p.number)],
      ];
      const label = make("text", "", 0);
      label.content = `#${p.number}`;
      out.push(open, label, make("link_close", "a", -1));
    }
  }
  return out;
}

/**
 * An issue's body or comment: Markdown, with its `#n` linked. Raw HTML off, as for files (the
 * parser of markdown.ts): a `<script>` in an issue is text. Links to outside stay links.
 */
export function renderIssueMarkdown(repo: string, text: string): Html {
  const markdown = markdownIt.get();
  const env = {};
  const tokens = markdown.parse(text, env);
  const Token = tokens[0]?.constructor as
    | (new (
        type: string,
        tag: string,
        nesting: -1 | 0 | 1,
      ) => Token)
    | undefined;
  if (Token)
    for (const t of tokens)
      if (t.type === "inline" && t.children)
        t.children = linkTokens(t.children, repo, (type, tag, nesting) => new Token(type, tag, nesting));
  return trusted(markdown.renderer.render(tokens, markdown.options, env));
}
