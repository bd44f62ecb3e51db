import { z } from "zod";
import { branchName, sequenceParam } from "../../shared/api/names.ts";
import { checkName } from "../../shared/checks/names.ts";
import { readLog } from "../../shared/ci/jobs/logs.ts";
import { requireRun } from "../../shared/ci/jobs/views.ts";
import { manualRun } from "../../shared/ci/scheduler/triggers.ts";
import { bytes, redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { csrfField } from "./csrf.ts";
import { csrfToken, formFields, orRefusedPage, parseForm, type Typed } from "./forms.ts";
import { checkHistoryPage, logPage, logTail, manualRunForm, runPage, runsPage } from "./pages/ci.ts";
import { bytesReply, htmlReply, seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/**
 * CI in the browser (docs/web.md, "CI"): a repo's runs, a run with its checks and logs, a log a
 * window at a time or whole as text, a check's history on a branch, and the manual run form,
 * which runs the API's `manualRun` under the API's rule (writer or higher).
 */

const HTML = { 200: bytes("text/html") };
const repoParams = z.object({ repo: z.string() });
const runId = z.uuid("must be a run id (a UUID)");
const runParams = z.object({ repo: z.string(), run: runId });
const logParams = z.object({ repo: z.string(), run: runId, check: checkName });
const manualRunFields = z.strictObject({ ...csrfToken, branch: branchName });

export const ciRoutes = [
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/ci",
    access: { repo: "reader" },
    summary: "Web: a repo's CI runs, newest first",
    params: repoParams,
    query: z.strictObject({ before: runId.optional() }),
    responses: HTML,
    handler: async ({ ctx, actor, repo, query }) =>
      htmlReply(await runsPage(ctx, actor, repo, query, csrfField(actor))),
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/ci",
    access: { repo: "writer" },
    summary: "Web: start a manual CI run of a branch at its head (form post)",
    params: repoParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const refused = {
        title: "The run was not started",
        form: (t: Typed) => manualRunForm(name, csrfField(actor), t),
        back: { label: "Back to the CI runs", url: u.ciUrl(name) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const { branch } = parseForm(typed, manualRunFields);
        const { run_id } = await manualRun(ctx, actor, repo, branch);
        return seeOther(u.runUrl(name, run_id), 303);
      });
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/ci/:run",
    access: { repo: "reader" },
    summary: "Web: a CI run with its checks and the tail of each check's log",
    params: runParams,
    responses: HTML,
    handler: async ({ ctx, actor, repo, params }) => htmlReply(await runPage(ctx, actor, repo, params.run)),
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/ci/:run/log/:check*",
    access: { repo: "reader" },
    summary: "Web: a window of a check's log, its colours rendered",
    params: logParams,
    query: z.strictObject({ start: sequenceParam.optional(), before: sequenceParam.optional() }),
    responses: HTML,
    handler: async ({ ctx, actor, repo, params, query }) =>
      htmlReply(await logPage(ctx, actor, repo, { ...params, ...query })),
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/ci/:run/tail/:check*",
    access: { repo: "reader" },
    summary:
      "Web: the part of a running check's log after byte `after`, coloured (the run page's streaming script)",
    params: logParams,
    query: z.strictObject({ after: sequenceParam }),
    responses: HTML,
    handler: async ({ ctx, repo, params, query }) =>
      htmlReply(await logTail(ctx, repo, { ...params, after: query.after })),
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/ci/:run/raw/:check*",
    access: { repo: "reader" },
    summary: "Web: a check's whole log as plain text",
    params: logParams,
    responses: { 200: bytes("text/plain") },
    handler: async ({ ctx, repo, params }) => {
      const job = await requireRun(ctx.pool, repo, params.run);
      const log = await readLog(ctx, job.id, params.check);
      // Plain text whatever the worker uploaded: a log must never run as a page of this site.
      return bytesReply(200, log.body, {
        "content-type": "text/plain; charset=utf-8",
        "cache-control": "private, no-store",
      });
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/ci/checks/:check*",
    access: { repo: "reader" },
    summary: "Web: a check's result at each sequence of a branch, newest first",
    params: z.object({ repo: z.string(), check: checkName }),
    query: z.strictObject({ branch: branchName.default("main"), before: sequenceParam.optional() }),
    responses: HTML,
    handler: async ({ ctx, actor, repo, params, query }) =>
      htmlReply(await checkHistoryPage(ctx, actor, repo, { check: params.check, ...query })),
  }),
];
