import { repoListResponse, repoResponse } from "../../shared/api/repos.ts";
import { created, noContent, ok, route } from "../../shared/http/route.ts";
import { createRepoRequest } from "../../shared/repos/api.ts";
import { createRepo, deleteRepo, listRepos, toRepoRecord } from "../../shared/repos/repos.ts";

export const repoRoutes = [
  route({
    method: "POST",
    path: "/repos",
    access: "user",
    summary: "Create a repo in an org (org owner or global admin); it starts with an empty main",
    body: createRepoRequest,
    responses: { 201: repoResponse },
    handler: async ({ ctx, actor, body }) => created(await createRepo(ctx.pool, actor, body)),
  }),
  route({
    method: "GET",
    path: "/repos",
    access: "user",
    summary: "List the repos the caller may read",
    responses: { 200: repoListResponse },
    handler: async ({ ctx, actor }) => ok({ repos: await listRepos(ctx.pool, actor) }),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*",
    access: { repo: "reader" },
    summary: "Get a repo",
    responses: { 200: repoResponse },
    handler: async ({ repo }) => ok(toRepoRecord(repo.repo)),
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*",
    access: { repo: "reader" },
    summary: "Delete a repo and everything in it (org owner or global admin)",
    responses: { 204: null },
    handler: async ({ ctx, actor, repo }) => {
      await deleteRepo(ctx.pool, actor, repo);
      return noContent();
    },
  }),
];
