import { z } from "zod";

export const MAX_RELEASE_NAME_LENGTH = 100;
export const MAX_NOTES_LENGTH = 65_536;

/** A release name: one path segment such as `v1.2.3`, compared exactly (case-sensitive). */
export const releaseName = z
  .string()
  .min(1, "must not be empty")
  .max(MAX_RELEASE_NAME_LENGTH, `must be at most ${MAX_RELEASE_NAME_LENGTH} characters`)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    "must start with a letter or digit and use only letters, digits, '.', '_' and '-'",
  );

export const createReleaseRequest = z.object({
  name: releaseName,
  sequence: z.int("must be a whole number").min(1, "must be 1 or more"),
  notes: z.string().max(MAX_NOTES_LENGTH, `must be at most ${MAX_NOTES_LENGTH} characters`).default(""),
});

export type CreateReleaseRequest = z.output<typeof createReleaseRequest>;
