import { z } from "zod";
import { secretName, setSecretBody } from "../../shared/api/secrets.ts";
import { bytes, redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { deleteSecret, listSecrets, setSecret } from "../../shared/repo-secrets/secrets.ts";
import { csrfField } from "./csrf.ts";
import { csrfToken, formFields, orRefusedPage, parseForm } from "./forms.ts";
import { html } from "./html.ts";
import { secretsPage, setSecretForm } from "./pages/secrets.ts";
import { htmlReply, seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/**
 * The repo's secrets page (docs/secrets.md, docs/web.md): admins list, set and delete, through the
 * operations the API's routes call. A refused form comes back without its value: no page ever
 * holds one, not even the one its admin typed.
 */

const setForm = z.strictObject({ ...csrfToken, name: secretName, ...setSecretBody.shape });
const repoParams = z.object({ repo: z.string() });

export const secretPageRoutes = [
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/secrets",
    access: { repo: "admin" },
    summary: "Web: a repo's secrets, never their values, with forms to set and delete them (admins)",
    params: repoParams,
    responses: { 200: bytes("text/html") },
    handler: async ({ ctx, actor, repo }) =>
      htmlReply(secretsPage(actor, repo, await listSecrets(ctx.pool, repo), csrfField(actor))),
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/secrets",
    access: { repo: "admin" },
    summary: "Web: create or replace a secret (form post; admins)",
    params: repoParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const { value: _never, ...shown } = typed;
      const refused = {
        title: "The secret was not set",
        form: (t: typeof typed) => setSecretForm(name, csrfField(actor), t),
        back: { label: "Back to the secrets", url: u.secretsUrl(name) },
      };
      return orRefusedPage(call, shown, refused, async () => {
        const form = parseForm(typed, setForm);
        await setSecret(ctx, actor, repo, form);
        return seeOther(u.secretsUrl(name), 303);
      });
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/secrets/:secret/delete",
    access: { repo: "admin" },
    summary: "Web: delete a secret (form post; admins)",
    params: z.object({ repo: z.string(), secret: secretName }),
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo, params } = call;
      const name = repo.repo.name;
      const refused = {
        title: "The secret was not deleted",
        form: () => html``,
        back: { label: "Back to the secrets", url: u.secretsUrl(name) },
      };
      return orRefusedPage(call, {}, refused, async () => {
        parseForm(formFields(call), z.strictObject(csrfToken));
        await deleteSecret(ctx.pool, actor, repo, params.secret);
        return seeOther(u.secretsUrl(name), 303);
      });
    },
  }),
];
