import { z } from "zod";
import { filePathProblem } from "./path-rules.ts";

/**
 * Names and paths, validated at the edge. The rules are documented in docs/names.md; every
 * segment starts with a letter or digit, so no name can contain the `/-/` separator.
 *
 * Every length check comes first and aborts (`abort: true`): zod otherwise runs the pattern too,
 * and a pattern with a repeated group recurses per repetition, so a name of a few MB in a 32 MiB
 * body overflowed the stack (a 500). After the length check a pattern only sees a short string.
 */
const segment = "[A-Za-z0-9][A-Za-z0-9._-]*";

export const orgName = z
  .string()
  .max(63, { message: "must be at most 63 characters", abort: true })
  .regex(
    new RegExp(`^${segment}$`),
    "must start with a letter or digit and use only letters, digits, '.', '_' and '-'",
  );

export const repoName = z
  .string()
  .max(255, { message: "must be at most 255 characters", abort: true })
  .regex(
    new RegExp(`^${segment}(/${segment}){1,7}$`),
    "must be '<org>/<repo>' (up to 8 segments), each segment starting with a letter or digit and using only letters, digits, '.', '_' and '-'",
  );

/** A repo name as `POST /repos` takes it: full or relative to the owner, 1 to 8 segments (shared/repos/api.ts). */
export const repoSegments = z
  .string()
  .max(255, "must be at most 255 characters")
  .regex(
    new RegExp(`^${segment}(/${segment}){0,7}$`),
    "must be a repo name, full ('<org>/<repo>') or relative to owner ('<repo>'), up to 8 segments, each starting with a letter or digit and using only letters, digits, '.', '_' and '-'",
  );

export const branchName = z
  .string()
  .min(1, "must not be empty")
  .max(200, { message: "must be at most 200 characters", abort: true })
  .regex(
    new RegExp(`^${segment}(/${segment})*$`),
    "must be segments separated by '/', each starting with a letter or digit and using only letters, digits, '.', '_' and '-'",
  )
  .refine((s) => !s.includes(".."), "must not contain '..'")
  .refine((s) => !s.endsWith("."), "must not end with '.'");

export const identity = z
  .string()
  .min(3, "must be at least 3 characters")
  .max(254, { message: "must be at most 254 characters", abort: true })
  .regex(/^[^\s/\\\p{Cc}]+$/u, "must not contain spaces, slashes or control characters")
  .transform((s) => s.toLowerCase());

export const email = z
  .string()
  .max(254, { message: "must be at most 254 characters", abort: true })
  .check(z.email("must be an email address"));

export const filePath = z.string().superRefine((path, ctx) => {
  const problem = filePathProblem(path);
  if (problem)
    ctx.addIssue({
      code: "custom",
      message: `'${path.slice(0, 80)}' ${problem}`,
      params: { code: "INVALID_PATH" },
    });
});

/** A non-negative whole number sent as a query string. */
export const sequenceParam = z
  .string()
  .regex(/^\d{1,15}$/, "must be a non-negative whole number")
  .transform(Number);

/** A page size: 1 to `max`, default `fallback`. */
export const limitParam = (fallback: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,6}$/, "must be a whole number")
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `must be between 1 and ${max}`)
    .default(fallback);

export const booleanParam = z
  .enum(["true", "false"], "must be 'true' or 'false'")
  .transform((v) => v === "true");
