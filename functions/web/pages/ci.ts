import { atLeast, type RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import type { CheckStatus } from "../../../shared/checks/names.ts";
import { findLog, readLog, readLogIfAny, withBody } from "../../../shared/ci/jobs/logs.ts";
import type { JobRow, JobStatus } from "../../../shared/ci/jobs/records.ts";
import {
  checkHistory,
  listRuns,
  type RunCheck,
  type RunRow,
  requireRun,
  runChecks,
} from "../../../shared/ci/jobs/views.ts";
import type { AppContext } from "../../../shared/context.ts";
import { ansiToHtml } from "../ansi.ts";
import { type Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";
import { type LogWindow, logIncrement, logWindow, RUN_PAGE_TAIL_BYTES, wholeLines } from "./log-window.ts";

/**
 * A repo's CI in the browser (docs/web.md, "CI"): its runs, one run with its checks and their
 * logs, a check's history on a branch, and the form that starts a manual run (writers, as the
 * API's `POST …/ci/run`).
 */

const RUNS_PER_PAGE = 30;
const HISTORY_PER_PAGE = 50;

const runStatusWords: Record<JobStatus, Html> = {
  queued: html`<span class="status queued">queued</span>`,
  claimed: html`<span class="status running">running</span>`,
  passed: html`<span class="status pass">&check; passed</span>`,
  failed: html`<span class="status fail">&cross; failed</span>`,
};

function checkStatusWords(status: CheckStatus | null): Html {
  if (status === null) return html`<span class="status queued">not started</span>`;
  if (status === "pending") return html`<span class="status running">running</span>`;
  return runStatusWords[status];
}

/** `1h 02m`, `3m 05s`, `12s`. */
function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const pad = (n: number) => String(n).padStart(2, "0");
  if (h > 0) return `${h}h ${pad(m)}m`;
  return m > 0 ? `${m}m ${pad(sec)}s` : `${sec}s`;
}

/** How long a run took (from its claim), or has been running; nothing while queued. */
function runDuration(job: JobRow, now: Date): string {
  if (!job.claimed_at) return "";
  const took = span((job.completed_at ?? now).getTime() - job.claimed_at.getTime());
  return job.completed_at ? took : `${took} so far`;
}

/** Who or what started a run: the person of a manual run, the author of the pushed commit, the schedule. */
function starter(repo: string, job: RunRow): Html {
  const author = job.commit_author ?? "someone";
  switch (job.trigger_type) {
    case "manual":
      return html`${job.created_by} <span class="muted">(manual)</span>`;
    case "push":
      return html`${author} <span class="muted">(push)</span>`;
    case "schedule":
      return html`<span class="muted">the schedule</span>`;
    default: {
      const id = job.trigger_proposal_id;
      const what = job.trigger_type === "proposal" ? "proposal opened" : "proposal updated";
      return html`${author} <span class="muted">(${id ? html`<a href="${u.proposalUrl(repo, id)}">${what}</a>` : what})</span>`;
    }
  }
}

/** The form that queues a manual run of a branch at its head (only ever rendered for writers). */
export function manualRunForm(repo: string, csrf: Html, typed: { branch?: string } = {}): Html {
  return html`<form method="post" action="${u.ciUrl(repo)}" class="manual-run" id="manual-run">${csrf}
<label for="run-branch">Branch</label>
<input id="run-branch" name="branch" required value="${typed.branch ?? "main"}">
<button type="submit">Run CI</button>
</form>`;
}

const runLink = (repo: string, job: JobRow) =>
  html`<a href="${u.runUrl(repo, job.id)}" title="${job.id}">${job.id.slice(0, 8)}</a>`;

export async function runsPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { before?: string | undefined },
  csrf: Html,
): Promise<Html> {
  const name = access.repo.name;
  const rows = await listRuns(ctx.pool, access, { before: q.before, limit: RUNS_PER_PAGE + 1 });
  const runs = rows.slice(0, RUNS_PER_PAGE);
  const older = rows.length > RUNS_PER_PAGE ? runs.at(-1) : undefined;
  const now = ctx.clock.now();
  const body = html`<h1>CI runs</h1>
${atLeast(access.role, "writer") ? manualRunForm(name, csrf) : ""}
${
  runs.length === 0
    ? html`<p>No runs${q.before ? " before this one" : ""}.</p>`
    : html`<table class="runs"><thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Trigger</th><th scope="col">Branch</th><th scope="col">Sequence</th><th scope="col">Started by</th><th scope="col">Queued</th><th scope="col">Duration</th></tr></thead><tbody>
${runs.map(
  (j) =>
    html`<tr><td>${runLink(name, j)}</td><td>${runStatusWords[j.status]}</td><td>${j.trigger_type}</td><td>${j.branch}</td><td><a href="${u.commitUrl(name, j.sequence)}">${j.sequence}</a></td><td>${starter(name, j)}</td><td>${timeTag(j.queued_at)}</td><td>${runDuration(j, now)}</td></tr>`,
)}
</tbody></table>`
}
<nav class="pager" aria-label="Pages">${q.before ? html`<a href="${u.ciUrl(name)}">Newest</a>` : ""}${older ? html`<a rel="next" href="${u.ciUrl(name, { before: older.id })}">Older runs</a>` : ""}</nav>`;
  return page({ title: `CI of ${name}`, actor, repo: access, tab: "ci", crumbs: repoCrumbs(name), body });
}

/**
 * A window of a log as coloured text, with links to the rest of it. A running check's log names
 * where the script asks for what comes after it (`data-log-tail`, `data-log-end`).
 */
function logView(repo: string, job: JobRow, check: string, w: LogWindow, streamed = false): Html {
  const raw = u.runRawLogUrl(repo, job.id, check);
  return html`<nav class="pager log-pager" aria-label="Log of ${check}">
${w.start > 0 ? html`<a href="${u.runLogUrl(repo, job.id, check, { before: w.start })}" class="earlier">Earlier output</a>` : ""}
${w.end < w.size ? html`<a href="${u.runLogUrl(repo, job.id, check, { start: w.end })}" class="later">Later output</a>` : ""}
<a href="${raw}" class="raw">Whole log as text</a>
<span class="muted">bytes ${w.start}&ndash;${w.end} of ${w.size}${streamed ? " so far" : ""}</span></nav>
${logPre(repo, job, check, w.text, streamed ? w.end : undefined)}`;
}

/** A log's text, coloured; `streamedTo` when the script is to follow it from that byte on. */
function logPre(repo: string, job: JobRow, check: string, text: string, streamedTo?: number): Html {
  // The newline after <pre> is the one HTML drops, so a log's own first blank line is kept.
  if (streamedTo === undefined) return html`<pre class="log">\n${ansiToHtml(text)}</pre>`;
  return html`<pre class="log" data-log-tail="${u.runLogTailUrl(repo, job.id, check)}" data-log-end="${streamedTo}">\n${ansiToHtml(text)}</pre>`;
}

/** A check's log on the run page: its tail; while it runs, the whole lines so far, followed live. */
async function checkLog(ctx: AppContext, repo: string, job: JobRow, c: RunCheck): Promise<Html> {
  const running = c.status === "pending" && (job.status === "claimed" || job.status === "queued");
  const log = c.log_bytes === null ? null : await readLogIfAny(ctx, job.id, c.check_name);
  if (!log) {
    if (!running) return html`<p class="muted">No log.</p>`;
    return html`<p class="muted log-waiting">Running: its output shows here as the worker sends it, every few seconds.</p>
${logPre(repo, job, c.check_name, "", 0)}`;
  }
  const streamed = running && !log.final;
  const shown = streamed ? wholeLines(log.body) : log.body;
  return logView(repo, job, c.check_name, logWindow(shown, {}, RUN_PAGE_TAIL_BYTES), streamed);
}

async function checkSection(ctx: AppContext, repo: string, job: JobRow, c: RunCheck): Promise<Html> {
  const took =
    c.reported_at && c.updated_at && c.status !== "pending"
      ? span(c.updated_at.getTime() - c.reported_at.getTime())
      : "";
  return html`<section class="check" aria-label="${c.check_name}" data-check="${c.check_name}">
<h3>${c.check_name} ${checkStatusWords(c.status)} <span class="muted">${took}</span></h3>
<p><a href="${u.checkHistoryUrl(repo, c.check_name, { branch: job.branch })}">History of ${c.check_name} on ${job.branch}</a></p>
${await checkLog(ctx, repo, job, c)}</section>`;
}

/** A run: what started it, its status, and each check with its log (live while it runs). */
export async function runPage(ctx: AppContext, actor: Actor, access: RepoAccess, id: string): Promise<Html> {
  const name = access.repo.name;
  const job = await requireRun(ctx.pool, access, id);
  const checks = await runChecks(ctx.pool, job);
  const sections = await Promise.all(checks.map((c) => checkSection(ctx, name, job, c)));
  const running = job.status === "queued" || job.status === "claimed";
  const body = html`<h1>Run ${job.id.slice(0, 8)}</h1>
<div data-live-region="run-status"><dl class="run">
<dt>Status</dt><dd id="run-status">${runStatusWords[job.status]}</dd>
<dt>Trigger</dt><dd>${job.trigger_type}</dd>
<dt>Branch</dt><dd><a href="${job.branch === "main" ? u.treeUrl(name) : u.branchUrl(name, job.branch)}">${job.branch}</a></dd>
<dt>Sequence</dt><dd><a href="${u.commitUrl(name, job.sequence)}">${job.sequence}</a></dd>
<dt>Started by</dt><dd>${starter(name, job)}</dd>
<dt>Queued</dt><dd>${timeTag(job.queued_at)}</dd>
${job.completed_at ? html`<dt>Finished</dt><dd>${timeTag(job.completed_at)}</dd>` : ""}
<dt>Duration</dt><dd>${runDuration(job, ctx.clock.now()) || "not started"}</dd>
${job.error ? html`<dt>Error</dt><dd>${job.error}</dd>` : ""}
</dl></div>
<h2>Checks</h2>
<div data-live-region="run-checks"${running ? html` data-log-streams` : ""}>${sections.length === 0 ? html`<p>No checks.</p>` : sections}</div>`;
  return page({
    title: `Run ${job.id.slice(0, 8)} of ${name}`,
    actor,
    repo: access,
    tab: "ci",
    crumbs: [...repoCrumbs(name), ["CI", u.ciUrl(name)], [job.id.slice(0, 8), u.runUrl(name, job.id)]],
    // A run in progress updates as its checks report (their events name the run's branch).
    ...(running ? { liveBranch: job.branch, liveSrc: u.runUrl(name, job.id) } : {}),
    body,
  });
}

/**
 * What the run page's script appends to a running check's log: the bytes after `after`, coloured,
 * in a bare `<pre>` saying where it ends and whether the log is whole (the script then stops).
 */
export async function logTail(
  ctx: AppContext,
  access: RepoAccess,
  q: { run: string; check: string; after: number },
): Promise<Html> {
  const job = await requireRun(ctx.pool, access, q.run);
  const stored = await findLog(ctx, job.id, q.check);
  // Nothing new (the usual answer for a quiet check): the stored bytes are not read.
  const log = stored && stored.bytes !== q.after ? await withBody(ctx, stored) : null;
  const part = log ? logIncrement(log.body, q.after, log.final) : { text: "", end: q.after, replace: false };
  return html`<pre class="log" data-log-end="${part.end}" data-log-final="${String(stored?.final ?? false)}"${part.replace ? html` data-log-replace` : ""}>\n${ansiToHtml(part.text)}</pre>`;
}

/** One window of a check's log, with links to the windows before and after it. */
export async function logPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { run: string; check: string; start?: number | undefined; before?: number | undefined },
): Promise<Html> {
  const name = access.repo.name;
  const job = await requireRun(ctx.pool, access, q.run);
  const log = await readLog(ctx, job.id, q.check);
  const body = html`<h1>Log of ${q.check}</h1>
<p><a href="${u.runUrl(name, job.id)}">Back to run ${job.id.slice(0, 8)}</a></p>
${logView(name, job, q.check, logWindow(log.body, q))}`;
  return page({
    title: `Log of ${q.check}`,
    actor,
    repo: access,
    tab: "ci",
    crumbs: [...repoCrumbs(name), ["CI", u.ciUrl(name)], [job.id.slice(0, 8), u.runUrl(name, job.id)]],
    body,
  });
}

/** A check's results at each sequence of a branch, newest first, each with the runs that tested it. */
export async function checkHistoryPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { check: string; branch: string; before?: number | undefined },
): Promise<Html> {
  const name = access.repo.name;
  const rows = await checkHistory(ctx.pool, access, { ...q, limit: HISTORY_PER_PAGE + 1 });
  const shown = rows.slice(0, HISTORY_PER_PAGE);
  const older = rows.length > HISTORY_PER_PAGE ? shown.at(-1) : undefined;
  const body = html`<h1>${q.check} on ${q.branch}</h1>
<form method="get" action="${u.checkHistoryUrl(name, q.check)}" class="inline"><label for="history-branch">Branch</label>
<input id="history-branch" name="branch" value="${q.branch}"> <button type="submit">Show</button></form>
${
  shown.length === 0
    ? html`<p>No results of ${q.check} on ${q.branch}.</p>`
    : html`<table class="check-history"><thead><tr><th scope="col">Sequence</th><th scope="col">Result</th><th scope="col">Reported</th><th scope="col">Runs</th></tr></thead><tbody>
${shown.map(
  (r) =>
    html`<tr><td><a href="${u.commitUrl(name, r.sequence)}">${r.sequence}</a></td><td>${checkStatusWords(r.status)}</td><td>${timeTag(r.updated_at)}</td><td>${r.runs.map((id) => html`<a href="${u.runUrl(name, id)}">${id.slice(0, 8)}</a> `)}</td></tr>`,
)}
</tbody></table>`
}
${older ? html`<nav class="pager" aria-label="Pages"><a rel="next" href="${u.checkHistoryUrl(name, q.check, { branch: q.branch, before: older.sequence })}">Older</a></nav>` : ""}`;
  return page({
    title: `${q.check} on ${q.branch}`,
    actor,
    repo: access,
    tab: "ci",
    crumbs: [...repoCrumbs(name), ["CI", u.ciUrl(name)], [q.check, u.checkHistoryUrl(name, q.check, q)]],
    body,
  });
}
