import type { IncomingHttpHeaders } from "node:http";
import { z } from "zod";
import type { Actor } from "../../shared/auth/actor.ts";
import { CSRF_FIELD } from "../../shared/auth/csrf.ts";
import { DomainError, fail } from "../../shared/errors.ts";
import type { Call, Reply } from "../../shared/http/route.ts";
import { bodyText } from "../../shared/http/text.ts";
import { type Html, html } from "./html.ts";
import { page } from "./layout.ts";
import { htmlReply } from "./reply.ts";

/** A form post's fields as typed (application/x-www-form-urlencoded), before any validation. */
export type Typed = Record<string, string>;

/** The session's CSRF token, checked by the access layer before the route runs. */
export const csrfToken = { [CSRF_FIELD]: z.string().max(512).optional() };

export function formFields(call: Call<unknown, unknown, unknown>): Typed {
  const type = String(call.headers["content-type"] ?? "");
  if (!type.startsWith("application/x-www-form-urlencoded"))
    fail("VALIDATION_FAILED", "a form post must be application/x-www-form-urlencoded");
  return Object.fromEntries(new URLSearchParams(call.rawBody ? bodyText(call.rawBody) : ""));
}

/**
 * A form that may upload a file (multipart/form-data): its text fields as typed and the uploaded
 * file's bytes, if one was chosen. Parsed by the platform's own multipart reader (undici's).
 */
export async function uploadFormFields(
  call: Call<unknown, unknown, unknown>,
): Promise<{ typed: Typed; upload: Buffer | null }> {
  const type = String(call.headers["content-type"] ?? "");
  if (!type.startsWith("multipart/form-data")) return { typed: formFields(call), upload: null };
  let data: FormData;
  try {
    const body = call.rawBody ? new Uint8Array(call.rawBody) : new Uint8Array();
    data = await new Request("http://form.invalid/", {
      method: "POST",
      headers: { "content-type": type },
      body,
    }).formData();
  } catch {
    fail("VALIDATION_FAILED", "the multipart form body could not be read");
  }
  const typed: Typed = {};
  let upload: Buffer | null = null;
  for (const [key, value] of data.entries()) {
    if (typeof value === "string") typed[key] = value;
    else if (value.size > 0) upload = Buffer.from(await value.arrayBuffer());
  }
  return { typed, upload };
}

/** The typed fields validated like any other input: a 400 VALIDATION_FAILED names what is wrong. */
export function parseForm<S extends z.ZodType>(typed: unknown, schema: S): z.output<S> {
  const parsed = schema.safeParse(typed);
  if (!parsed.success) fail("VALIDATION_FAILED", z.prettifyError(parsed.error));
  return parsed.data;
}

export const wantsHtml = (headers: IncomingHttpHeaders) =>
  /(^|[\s,])text\/html\b/i.test(String(headers.accept ?? ""));

export interface RefusedForm {
  title: string;
  /** The form again, filled with what was typed, so nothing is lost. */
  form: (typed: Typed) => Html;
  back: { label: string; url: string };
}

/** A refusal for want of a role (or of the thing itself) is not fixed by posting again. */
const mayRetry = (err: DomainError) => err.status !== 403 && err.status !== 404;

/** What was typed, as text to copy, where the form itself may not be offered again. */
function keptText(typed: Typed): Html {
  const fields = Object.entries(typed).filter(([k, v]) => k !== CSRF_FIELD && v !== "");
  return html`<section aria-labelledby="kept-h" id="kept"><h2 id="kept-h">What you typed</h2><dl>
${fields.map(([k, v]) => html`<dt>${k}</dt><dd><pre>${v}</pre></dd>`)}</dl></section>`;
}

/**
 * Runs a form's operation; a refusal (bad input, no permission, a name taken, a concurrent change)
 * answers a browser with a page that says why, keeps what was typed in the form (as text, when the
 * refusal is for want of a role: the form is never offered to someone who may not use it), links back,
 * with the error's status. A client that does not ask for HTML gets the API's JSON error instead.
 */
export async function orRefusedPage(
  call: { actor: Actor | null; headers: IncomingHttpHeaders },
  typed: Typed,
  refused: RefusedForm,
  work: () => Promise<Reply>,
): Promise<Reply> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof DomainError) || !wantsHtml(call.headers)) throw err;
    const body = html`<h1>${refused.title}</h1>
<div class="notice refused" role="alert" id="form-refused"><p>${err.message}</p><p class="muted">${err.code}</p></div>
${mayRetry(err) ? refused.form(typed) : keptText(typed)}
<p><a href="${refused.back.url}" id="back-link">${refused.back.label}</a></p>`;
    return htmlReply(page({ title: refused.title, actor: call.actor, body }), err.status);
  }
}
