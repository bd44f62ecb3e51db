import { z } from "zod";
import { releaseListResponse, releaseResponse } from "../../shared/api/review.ts";
import { created, noContent, ok, route } from "../../shared/http/route.ts";
import { createReleaseRequest, releaseName } from "../../shared/releases/api.ts";
import { createRelease, deleteRelease, getRelease, listReleases } from "../../shared/releases/releases.ts";

const releaseParams = z.object({ repo: z.string(), release_name: releaseName });

export const releaseRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/releases",
    access: { repo: "maintainer" },
    summary: "Name a commit's sequence as a release",
    body: createReleaseRequest,
    responses: { 201: releaseResponse },
    handler: async ({ ctx, actor, repo, body }) => created(await createRelease(ctx.pool, actor, repo, body)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/releases",
    access: { repo: "reader" },
    summary: "List releases, newest first (highest sequence, then latest created)",
    responses: { 200: releaseListResponse },
    handler: async ({ ctx, repo }) => ok({ releases: await listReleases(ctx.pool, repo) }),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/releases/:release_name",
    access: { repo: "reader" },
    summary: "Get a release",
    params: releaseParams,
    responses: { 200: releaseResponse },
    handler: async ({ ctx, repo, params }) => ok(await getRelease(ctx.pool, repo, params.release_name)),
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*/-/releases/:release_name",
    access: { repo: "admin" },
    summary: "Delete a release",
    params: releaseParams,
    responses: { 204: null },
    handler: async ({ ctx, repo, params }) => {
      await deleteRelease(ctx.pool, repo, params.release_name);
      return noContent();
    },
  }),
];
