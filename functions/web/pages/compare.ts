import type { RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { compareSides, parseSide, type Side } from "../../../shared/commits/compare.ts";
import type { AppContext } from "../../../shared/context.ts";
import { DomainError } from "../../../shared/errors.ts";
import { type Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";
import { type DiffLayout, renderChanges } from "./diff.ts";

function compareForm(repo: string, q: { from?: string | undefined; to?: string | undefined }): Html {
  return html`<form class="view" method="get" aria-label="Choose what to compare">
<label for="compare-from">From</label> <input id="compare-from" name="from" value="${q.from ?? ""}" list="pick-branches" autocomplete="off" required placeholder="main, 12 or main@12">
<datalist id="pick-branches" data-branches-of="${repo}"></datalist>
<label for="compare-to">To</label> <input id="compare-to" name="to" value="${q.to ?? ""}" autocomplete="off" required placeholder="a branch, 15 or feature@15">
<button type="submit">Compare</button>
<span class="muted">each side is a branch (at its head), a sequence, or branch@sequence</span>
</form>`;
}

/** A side as typed, or a refusal naming the field (the page shows it with the form as typed). */
function sideOf(field: "from" | "to", text: string): Side {
  const side = parseSide(text);
  if (!side)
    throw new DomainError(
      "VALIDATION_FAILED",
      `query.${field}: '${text}' is not a branch, a sequence or branch@sequence`,
    );
  return side;
}

/** A comparison with its two sides as typed (its page's own URL, for the layout toggle). */
type Comparison = Awaited<ReturnType<typeof compareSides>> & { fromText: string; toText: string };

/** The changed files through the shared diff renderer, in the layout asked for. */
function changedFiles(repo: string, c: Comparison, layout: DiffLayout): Html {
  const pageUrl = u.compareUrl(repo, { from: c.fromText, to: c.toText });
  return renderChanges(
    c.files.map((f) => ({
      path: f.path,
      status: f.status,
      patch: f.diff,
      binary: f.binary,
      structure: f.structure,
      links: f.status === "deleted" ? {} : { file: u.fileUrl(repo, f.path, c.to) },
    })),
    { layout, layoutHref: (view) => u.withParams(pageUrl, { view: view === "unified" ? undefined : view }) },
  );
}

function comparison(repo: string, c: Comparison, layout: DiffLayout): Html {
  const where = (s: { branch: string; at: number }) => html`${s.branch} at ${s.at}`;
  const commits = c.diverged
    ? html`<p id="compare-commits-note">Not on one line of history: ${c.commitCount} commit${c.commitCount === 1 ? "" : "s"} only in ${where(c.to)}, ${c.commitsOnlyInFrom} only in ${where(c.from)}.</p>`
    : html`<p id="compare-commits-note">${c.commitCount} commit${c.commitCount === 1 ? "" : "s"} from ${where(c.from)} to ${where(c.to)}.</p>`;
  return html`<section aria-labelledby="commits-h"><h2 id="commits-h">Commits</h2>${commits}
${
  c.commits.length === 0
    ? ""
    : html`<table class="history"><thead><tr><th scope="col">Sequence</th><th scope="col">Message</th><th scope="col">Author</th><th scope="col">When</th><th scope="col">Branch</th></tr></thead><tbody>
${c.commits.map((e) => html`<tr><td><a href="${u.commitUrl(repo, e.sequence)}">${e.sequence}</a></td><td>${e.message.split("\n")[0]}</td><td>${e.author}</td><td>${timeTag(e.created_at)}</td><td>${e.branch}</td></tr>`)}
</tbody></table>`
}</section>
<section aria-labelledby="changes-h"><h2 id="changes-h">Changed files</h2>
<p id="compare-files-note">${c.changedFiles} file${c.changedFiles === 1 ? "" : "s"} changed${c.files.length < c.changedFiles ? `; the first ${c.files.length} shown` : ""}.</p>
${c.files.length === 0 ? "" : changedFiles(repo, c, layout)}
</section>`;
}

/**
 * Two views of the repo compared (`from`, `to`: each a branch, a sequence or branch@sequence): the
 * commits between them and the diff of every changed file. A side that names nothing (an unknown
 * branch, a sequence beyond the head) answers the refusal's status with the form as typed.
 */
export async function comparePage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { from?: string | undefined; to?: string | undefined; view: DiffLayout },
): Promise<{ html: Html; status: number }> {
  const name = access.repo.name;
  let result: Html | "" = "";
  let status = 200;
  if (q.from !== undefined && q.to !== undefined) {
    try {
      const c = await compareSides(ctx, access, { from: sideOf("from", q.from), to: sideOf("to", q.to) });
      result = comparison(name, { ...c, fromText: q.from, toText: q.to }, q.view);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      status = err.status;
      result = html`<p role="alert" id="compare-error">${err.message}</p><p class="muted">${err.code}</p>`;
    }
  }
  const body = html`<h1>Compare</h1>
${compareForm(name, q)}
${result}`;
  return {
    html: page({
      title: `Compare · ${name}`,
      actor,
      repo: access,
      tab: "history",
      crumbs: repoCrumbs(name),
      body,
    }),
    status,
  };
}
