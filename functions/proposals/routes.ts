import { z } from "zod";
import { branchName } from "../../shared/api/names.ts";
import { proposalListResponse, proposalResponse } from "../../shared/api/review.ts";
import { noFields } from "../../shared/api/strict.ts";
import { created, ok, route } from "../../shared/http/route.ts";
import {
  openProposalRequest,
  patchProposalRequest,
  proposalId,
  proposalStates,
} from "../../shared/proposals/api.ts";
import {
  closeProposal,
  getProposal,
  listProposals,
  openProposal,
  patchProposal,
} from "../../shared/proposals/proposals.ts";

const proposalParams = z.object({ repo: z.string(), id: proposalId });

export const proposalRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/proposals",
    access: { repo: "writer" },
    summary: "Open a proposal to merge a branch into a base branch (one open proposal per branch)",
    body: openProposalRequest,
    responses: { 201: proposalResponse },
    handler: async ({ ctx, actor, repo, body }) => created(await openProposal(ctx.pool, actor, repo, body)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/proposals",
    access: { repo: "reader" },
    summary: "List proposals, newest first, optionally by state and source branch",
    query: z.strictObject({
      state: z.enum(proposalStates, "must be open, closed or merged").optional(),
      branch: branchName.optional(),
    }),
    responses: { 200: proposalListResponse },
    handler: async ({ ctx, repo, query }) => ok({ proposals: await listProposals(ctx.pool, repo, query) }),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/proposals/:id",
    access: { repo: "reader" },
    summary: "Get a proposal",
    params: proposalParams,
    responses: { 200: proposalResponse },
    handler: async ({ ctx, repo, params }) => ok(await getProposal(ctx.pool, repo, params.id)),
  }),
  route({
    method: "PATCH",
    path: "/repos/:repo*/-/proposals/:id",
    access: { repo: "writer" },
    summary: "Change an open proposal's title or description (its author or a maintainer)",
    params: proposalParams,
    body: patchProposalRequest,
    responses: { 200: proposalResponse },
    handler: async ({ ctx, actor, repo, params, body }) =>
      ok(await patchProposal(ctx.pool, actor, repo, params.id, body)),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/proposals/:id/close",
    access: { repo: "writer" },
    summary: "Close an open proposal without merging (its author or a maintainer)",
    params: proposalParams,
    body: noFields,
    responses: { 200: proposalResponse },
    handler: async ({ ctx, actor, repo, params }) =>
      ok(await closeProposal(ctx.pool, actor, repo, params.id)),
  }),
];
