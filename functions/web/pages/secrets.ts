import type { RepoAccess } from "../../../shared/access/roles.ts";
import type { SecretResponse } from "../../../shared/api/secrets.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { MAX_SECRET_BYTES } from "../../../shared/repo-secrets/rules.ts";
import type { Typed } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";

/**
 * The form that sets a secret. The value field is never filled in: not from a refused post, not
 * from the stored secret (which no page can read); the browser is asked not to remember it.
 */
export const setSecretForm = (repo: string, csrf: Html, typed: Typed = {}) =>
  html`<form method="post" action="${u.secretsUrl(repo)}" id="set-secret" autocomplete="off"><fieldset><legend>Set a secret</legend>${csrf}
<label for="secret-name">Name</label><input id="secret-name" name="name" required maxlength="128" pattern="[A-Z_][A-Z0-9_]*" value="${typed["name"] ?? ""}" aria-describedby="secret-name-help">
<p class="muted" id="secret-name-help">Like an environment variable: A&ndash;Z, 0&ndash;9 and _. Setting an existing name replaces its value.</p>
<label for="secret-value">Value</label><textarea id="secret-value" name="value" required rows="3" spellcheck="false" autocomplete="off" aria-describedby="secret-value-help"></textarea>
<p class="muted" id="secret-value-help">At most ${String(MAX_SECRET_BYTES / 1024)} KiB. Encrypted when stored; no page or API shows it again.</p>
<label for="secret-description">Description (optional)</label><input id="secret-description" name="description" maxlength="500" value="${typed["description"] ?? ""}">
<button type="submit">Set secret</button></fieldset></form>`;

function secretRow(repo: string, s: SecretResponse, csrf: Html): Html {
  return html`<tr><td><code>${s.name}</code></td><td>${s.description}</td><td>${String(s.size_bytes)}</td><td>${s.set_by}</td><td>${timeTag(s.set_at)}</td>
<td><form method="post" action="${u.secretDeleteUrl(repo, s.name)}" class="inline">${csrf}<button type="submit" aria-label="Delete ${s.name}">Delete</button></form></td></tr>`;
}

/** A repo's secrets for its admins: who set each and when, never a value; set and delete forms. */
export function secretsPage(actor: Actor, access: RepoAccess, secrets: SecretResponse[], csrf: Html): Html {
  const name = access.repo.name;
  const body = html`<h1>Secrets</h1>
<p class="muted">Values CI checks read from <code>/run/secrets/NAME</code> when their <code>.svc/ci.yaml</code> entry lists them under <code>secrets:</code>; only pushes to main, schedules and maintainers' manual runs get them.</p>
${
  secrets.length === 0
    ? html`<p id="no-secrets">This repo has no secrets.</p>`
    : html`<table id="secrets"><thead><tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Bytes</th><th scope="col">Set by</th><th scope="col">Set</th><th scope="col">Actions</th></tr></thead><tbody>
${secrets.map((s) => secretRow(name, s, csrf))}
</tbody></table>`
}
${setSecretForm(name, csrf)}`;
  return page({
    title: `Secrets of ${name}`,
    actor,
    repo: access,
    tab: "secrets",
    crumbs: repoCrumbs(name),
    body,
  });
}
