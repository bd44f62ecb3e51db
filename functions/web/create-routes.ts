import { z } from "zod";
import { branchName, orgName } from "../../shared/api/names.ts";
import { createBranch } from "../../shared/branches/branches.ts";
import { redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { createOrg } from "../../shared/orgs/orgs.ts";
import { createRepoRequest } from "../../shared/repos/api.ts";
import { createRepo } from "../../shared/repos/repos.ts";
import { csrfField } from "./csrf.ts";
import { csrfToken, formFields, orRefusedPage, parseForm } from "./forms.ts";
import { createBranchForm, createOrgForm, createRepoForm } from "./pages/create.ts";
import { seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/**
 * The forms that create an org, a repo and a branch (docs/web.md). Each calls the operation the
 * API's route calls, under the same access rule, so the same people may use it; a refusal shows
 * the form again as typed.
 */

const orgForm = z.strictObject({ ...csrfToken, name: orgName });
const repoForm = z.strictObject({ ...csrfToken, name: z.string() });
const branchForm = z.strictObject({
  ...csrfToken,
  name: branchName,
  draft: z.literal("true").optional(),
});

export const createRoutes = [
  route({
    method: "POST",
    path: "/ui/orgs",
    access: "user",
    summary: "Web: create an org (form post); the caller becomes its owner",
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor } = call;
      const typed = formFields(call);
      const refused = {
        title: "The org was not created",
        form: (t: typeof typed) => createOrgForm(csrfField(actor), t),
        back: { label: "Back to the orgs", url: u.orgsUrl() },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const form = parseForm(typed, orgForm);
        const org = await createOrg(ctx.pool, actor, form.name);
        return seeOther(u.orgUrl(org.name), 303);
      });
    },
  }),
  route({
    method: "POST",
    path: "/ui/orgs/:org/repos",
    access: "user",
    summary: "Web: create a repo in an org (form post; org owner or global admin)",
    params: z.object({ org: orgName }),
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, params } = call;
      const typed = formFields(call);
      const refused = {
        title: "The repo was not created",
        form: (t: typeof typed) => createRepoForm(params.org, csrfField(actor), t),
        back: { label: `Back to ${params.org}`, url: u.orgUrl(params.org) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const form = parseForm(typed, repoForm);
        const input = parseForm({ owner: params.org, name: form.name }, createRepoRequest);
        const repo = await createRepo(ctx.pool, actor, input);
        return seeOther(u.repoUrl(repo.name), 303);
      });
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/branches",
    access: { repo: "maintainer" },
    summary: "Web: create a branch at the head of main (form post)",
    params: z.object({ repo: z.string() }),
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const refused = {
        title: "The branch was not created",
        form: (t: typeof typed) => createBranchForm(name, csrfField(actor), t),
        back: { label: "Back to the branches", url: u.branchesUrl(name) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const form = parseForm(typed, branchForm);
        const branch = await createBranch(ctx.pool, actor, repo, {
          name: form.name,
          draft: form.draft === "true",
        });
        return seeOther(u.branchUrl(name, branch.name), 303);
      });
    },
  }),
];
