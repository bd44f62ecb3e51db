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

const notesText = z.string().max(MAX_NOTES_LENGTH, `must be at most ${MAX_NOTES_LENGTH} characters`);

/**
 * `POST releases`: the spec's `{name, sequence, notes}`. `body` is accepted as another name for
 * `notes`, the name the spec's origin clients send (their release notes field is `body`); both at
 * once is refused, whatever their values, so no text is ever silently dropped (docs/api.md).
 */
export const createReleaseRequest = z
  .strictObject({
    name: releaseName,
    sequence: z.int("must be a whole number").min(1, "must be 1 or more"),
    notes: notesText.optional(),
    body: notesText.optional(),
  })
  .superRefine((r, ctx) => {
    if (r.notes !== undefined && r.body !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["body"],
        message: "is another name for notes; send notes or body, not both",
      });
  })
  .transform(({ name, sequence, notes, body }) => ({ name, sequence, notes: notes ?? body ?? "" }));

export type CreateReleaseRequest = z.output<typeof createReleaseRequest>;
