import { z } from "zod";
import { redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import {
  openProposalRequest,
  patchProposalRequest,
  proposalDescription,
  proposalId,
  proposalTitle,
} from "../../shared/proposals/api.ts";
import { closeProposal, openProposal, patchProposal } from "../../shared/proposals/proposals.ts";
import { csrfField } from "./csrf.ts";
import { csrfToken, formFields, orRefusedPage, parseForm, type Typed } from "./forms.ts";
import { closeProposalForm, editProposalForm, openProposalForm } from "./pages/proposal-forms.ts";
import { seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/**
 * Opening, editing and closing a proposal from the browser (docs/web.md), through the API's own
 * operations and request schemas: writers open, the author or a maintainer edits and closes.
 */

const repoParams = z.object({ repo: z.string() });
const proposalParams = z.object({ repo: z.string(), id: proposalId });
const openFields = z.strictObject({
  ...csrfToken,
  branch: z.string(),
  title: z.string(),
  description: z.string(),
});
const editFields = z.strictObject({ ...csrfToken, title: proposalTitle, description: proposalDescription });

export const proposalRoutes = [
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/proposals",
    access: { repo: "writer" },
    summary: "Web: open a proposal for a branch (form post)",
    params: repoParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const refused = {
        title: "The proposal was not opened",
        form: (t: Typed) => openProposalForm(name, csrfField(actor), t),
        back: { label: "Back to the proposals", url: u.proposalsUrl(name) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const { branch, title, description } = parseForm(typed, openFields);
        const input = parseForm({ branch, title, description }, openProposalRequest);
        const proposal = await openProposal(ctx.pool, actor, repo, input);
        return seeOther(u.proposalUrl(name, proposal.id), 303);
      });
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/proposals/:id/edit",
    access: { repo: "writer" },
    summary: "Web: change an open proposal's title and description (form post; author or maintainer)",
    params: proposalParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo, params } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const refused = {
        title: "The proposal was not changed",
        form: (t: Typed) => editProposalForm(name, params.id, csrfField(actor), t),
        back: { label: "Back to the proposal", url: u.proposalUrl(name, params.id) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const { title, description } = parseForm(typed, editFields);
        await patchProposal(
          ctx.pool,
          actor,
          repo,
          params.id,
          parseForm({ title, description }, patchProposalRequest),
        );
        return seeOther(u.proposalUrl(name, params.id), 303);
      });
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/proposals/:id/close",
    access: { repo: "writer" },
    summary: "Web: close an open proposal without merging (form post; author or maintainer)",
    params: proposalParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo, params } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const refused = {
        title: "The proposal was not closed",
        form: () => closeProposalForm(name, params.id, csrfField(actor)),
        back: { label: "Back to the proposal", url: u.proposalUrl(name, params.id) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        parseForm(typed, z.strictObject(csrfToken));
        await closeProposal(ctx.pool, actor, repo, params.id);
        return seeOther(u.proposalUrl(name, params.id), 303);
      });
    },
  }),
];
