import { z } from "zod";
import {
  revealSecretsBody,
  revealSecretsResponse,
  secretListResponse,
  secretName,
  secretResponse,
  setSecretBody,
} from "../../shared/api/secrets.ts";
import { noContent, ok, route } from "../../shared/http/route.ts";
import { revealForJob } from "../../shared/repo-secrets/reveal.ts";
import { deleteSecret, listSecrets, setSecret } from "../../shared/repo-secrets/secrets.ts";

const secretParams = z.object({ repo: z.string(), secret: secretName });

/** Repo secrets for CI (docs/secrets.md): the origin system's paths. No route answers a value but reveal. */
export const secretRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/secrets",
    access: { repo: "reader" },
    summary: "Lists the repo's secrets: names, descriptions, sizes, who set each and when; never a value",
    responses: { 200: secretListResponse },
    handler: async ({ ctx, repo }) => ok({ secrets: await listSecrets(ctx.pool, repo) }),
  }),
  route({
    method: "PUT",
    path: "/repos/:repo*/-/secrets/:secret",
    access: { repo: "admin" },
    summary:
      "Creates or replaces a secret; the value (at most 64 KiB) only in the body, encrypted at rest; answers its metadata",
    params: secretParams,
    body: setSecretBody,
    responses: { 200: secretResponse },
    handler: async ({ ctx, actor, repo, params, body }) =>
      ok(await setSecret(ctx, actor, repo, { name: params.secret, ...body })),
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*/-/secrets/:secret",
    access: { repo: "admin" },
    summary: "Deletes a secret",
    params: secretParams,
    responses: { 204: null },
    handler: async ({ ctx, actor, repo, params }) => {
      await deleteSecret(ctx.pool, actor, repo, params.secret);
      return noContent();
    },
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/secrets/reveal",
    access: "requestToken",
    summary:
      "The values (base64) of the secrets one check of the job lists in .svc/ci.yaml, for runs that may have them; request token of a job of this repo",
    params: z.object({ repo: z.string() }),
    body: revealSecretsBody,
    responses: { 200: revealSecretsResponse },
    handler: async ({ ctx, job, params, body }) => ok(await revealForJob(ctx, job, params.repo, body)),
  }),
];
