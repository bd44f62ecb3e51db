import { z } from "zod";
import { orgName, repoName } from "../../shared/api/names.ts";
import { created, noContent, ok, route } from "../../shared/http/route.ts";
import { createRepo, deleteRepo, listRepos, toRepoRecord } from "../../shared/repos/repos.ts";

export const repoRoutes = [
  route({
    method: "POST",
    path: "/repos",
    access: "user",
    summary: "Create a repo in an org (org owner or global admin); it starts with an empty main",
    body: z.object({ owner: orgName, name: repoName }),
    handler: async ({ ctx, actor, body }) => created(await createRepo(ctx.pool, actor!, body)),
  }),
  route({
    method: "GET",
    path: "/repos",
    access: "user",
    summary: "List the repos the caller may read",
    handler: async ({ ctx, actor }) => ok({ repos: await listRepos(ctx.pool, actor!) }),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*",
    access: { repo: "reader" },
    summary: "Get a repo",
    handler: async ({ repo }) => ok(toRepoRecord(repo!.repo)),
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*",
    access: { repo: "reader" },
    summary: "Delete a repo and everything in it (org owner or global admin)",
    handler: async ({ ctx, actor, repo }) => {
      await deleteRepo(ctx.pool, actor!, repo!);
      return noContent();
    },
  }),
];
