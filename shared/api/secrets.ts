import { z } from "zod";
import { MAX_CHECK_SECRETS, MAX_SECRET_BYTES, secretNameProblem } from "../repo-secrets/rules.ts";
import { timestamp, uuid } from "./wire.ts";

/** Repo secrets for CI on the wire (docs/secrets.md). No response shape has a field for a value. */

/** A secret's name in a path or in `.svc/ci.yaml` (`secretNameProblem`). */
export const secretName = z.string().superRefine((s, ctx) => {
  const why = secretNameProblem(s);
  if (why) ctx.addIssue({ code: "custom", message: why });
});

/** `PUT /repos/{name}/-/secrets/{secret}`: the value only here, never in the URL. */
export const setSecretBody = z.strictObject({
  value: z
    .string("must be a string")
    .min(1, "must not be empty")
    .refine((v) => Buffer.byteLength(v) <= MAX_SECRET_BYTES, {
      message: `must be at most ${MAX_SECRET_BYTES} bytes (64 KiB) in UTF-8`,
    }),
  description: z.string().max(500, "must be at most 500 characters").optional(),
});

/** A secret's metadata: everything but its value, which no answer carries. */
export const secretResponse = z.object({
  id: uuid,
  name: z.string(),
  description: z.string(),
  size_bytes: z.int().positive(),
  set_by: z.string(),
  set_at: timestamp,
  created_by: z.string(),
  created_at: timestamp,
});
export type SecretResponse = z.output<typeof secretResponse>;
export const secretListResponse = z.object({ secrets: z.array(secretResponse) });
export type SecretListResponse = z.output<typeof secretListResponse>;

/** What a worker asks for one check: the names that check lists in `.svc/ci.yaml`. */
export const revealSecretsBody = z.strictObject({
  check_name: z.string().min(1, "must not be empty"),
  names: z.array(secretName).min(1, "must name at least one secret").max(MAX_CHECK_SECRETS),
});

/** The values, base64 (binary-safe JSON), by name; `missing`: names the repo has no secret for. */
export const revealSecretsResponse = z.object({
  values: z.record(z.string(), z.string()),
  missing: z.array(z.string()),
});
export type RevealSecretsResponse = z.output<typeof revealSecretsResponse>;
