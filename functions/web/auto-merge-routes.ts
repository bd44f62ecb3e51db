import { z } from "zod";
import { branchName } from "../../shared/api/names.ts";
import { redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { disableAutoMerge, enableAutoMerge } from "../../shared/merge/auto-merge.ts";
import { listProposals } from "../../shared/proposals/proposals.ts";
import { csrfToken, formFields, orRefusedPage, parseForm } from "./forms.ts";
import { html } from "./html.ts";
import { seeOther } from "./reply.ts";
import * as u from "./urls.ts";

const branchParams = z.object({ repo: z.string(), branch: branchName });
const autoMergeFields = z.strictObject({ ...csrfToken, state: z.enum(["on", "off"], "must be on or off") });

/** Turning auto-merge on and off from the branch and proposal pages (docs/auto-merge.md). */
export const autoMergeRoutes = [
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/branch/:branch*/auto-merge",
    access: { repo: "writer" },
    summary: "Web: turn auto-merge on or off for a branch (form post)",
    params: branchParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo, params } = call;
      const name = repo.repo.name;
      const [open] = await listProposals(ctx.pool, repo, { state: "open", branch: params.branch });
      const home = open ? u.proposalUrl(name, open.id) : u.branchUrl(name, params.branch);
      const refused = {
        title: "Auto-merge was not changed",
        form: () => html``,
        back: { label: "Back to the branch", url: home },
      };
      return orRefusedPage(call, formFields(call), refused, async () => {
        const { state } = parseForm(formFields(call), autoMergeFields);
        await (state === "on" ? enableAutoMerge : disableAutoMerge)(ctx, actor, repo, params.branch);
        return seeOther(home, 303);
      });
    },
  }),
];
