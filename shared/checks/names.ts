import { z } from "zod";

/** An image manifest digest as registries name it: `sha256:` and 64 lowercase hex digits. */
export const imageDigest = z
  .string()
  .regex(/^sha256:[a-f0-9]{64}$/, "must be sha256: and 64 lowercase hex digits");

export const checkStatuses = ["passed", "failed", "pending"] as const;
export type CheckStatus = (typeof checkStatuses)[number];

export const MAX_CHECK_NAME = 200;
export const MAX_LOG_URL = 2048;

/** Why `name` is not a valid check name, or null when it is. */
export function checkNameProblem(name: string): string | null {
  if (name === "") return "must not be empty";
  if (name.length > MAX_CHECK_NAME) return `must be at most ${MAX_CHECK_NAME} characters`;
  if (!/^[A-Za-z0-9._/-]+$/.test(name)) return "must use only letters, digits, '.', '_', '-' and '/'";
  if (name.startsWith("/")) return "must not start with '/'";
  // A check name travels in URL paths (`/check/{check_name}/logs`), where clients collapse empty,
  // '.' and '..' segments; names that would change on the way are refused.
  const parts = name.split("/");
  if (parts.some((p) => p === "")) return "must not contain empty segments ('//' or a trailing '/')";
  if (parts.some((p) => p === "." || p === "..")) return "must not contain '.' or '..' segments";
  return null;
}

/** A check run's name, conventionally `<namespace>/<name>` (docs/reviews.md). */
export const checkName = z.string().superRefine((name, ctx) => {
  const problem = checkNameProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** An absolute http(s) URL to a check run's log. */
export const logUrl = z
  .string()
  .max(MAX_LOG_URL, `must be at most ${MAX_LOG_URL} characters`)
  .pipe(z.url({ protocol: /^https?$/, error: "must be an absolute http or https URL" }));
