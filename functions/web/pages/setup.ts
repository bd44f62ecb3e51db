import type { Reply } from "../../../shared/http/route.ts";
import { html } from "../html.ts";
import { page } from "../layout.ts";
import { htmlReply } from "../reply.ts";

/**
 * What a browser sees when sign-in is needed but no identity provider is configured (plain
 * `npm start`): the two ways on, development mode or an OAuth client, instead of a JSON 503.
 */
export function signInNotConfiguredPage(): Reply {
  const body = html`<h1>Sign-in is not set up</h1>
<p role="alert">This Quire has no identity provider configured, so nobody can sign in yet.</p>
<h2>Trying Quire on your machine</h2>
<p>Stop the server and start it in development mode, where every request is you, with no sign-in:</p>
<pre><code>DEV_IDENTITY=you@example.com npm start</code></pre>
<p>To try review and merge as several people, list them instead (the first is the default; switch in the page header):</p>
<pre><code>DEV_IDENTITIES=alice@example.com,bob@example.com npm start</code></pre>
<p class="muted">Development mode works only on a loopback address; never use it in production.</p>
<h2>Signing in for real</h2>
<p>Configure an OAuth client of your identity provider: set <code>OIDC_CLIENT_ID</code> and <code>OIDC_CLIENT_SECRET</code> (and <code>OIDC_ISSUER</code> when it is not Google). See docs/configuration.md and docs/sessions.md.</p>`;
  return htmlReply(page({ title: "Sign-in is not set up", actor: null, body }), 503);
}
