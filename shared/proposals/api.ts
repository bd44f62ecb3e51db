import { z } from "zod";
import { branchName } from "../api/names.ts";

/** Limits of a proposal's text fields, in characters (UTF-16 code units, as JavaScript counts). */
export const MAX_TITLE_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 65_536;

export const proposalStates = ["open", "closed", "merged"] as const;

export const proposalTitle = z
  .string()
  .min(1, "must not be empty")
  .max(MAX_TITLE_LENGTH, `must be at most ${MAX_TITLE_LENGTH} characters`)
  .refine((s) => s.trim() !== "", "must not be blank");

export const proposalDescription = z
  .string()
  .max(MAX_DESCRIPTION_LENGTH, `must be at most ${MAX_DESCRIPTION_LENGTH} characters`);

/** A proposal id: a UUID, so a malformed one is refused before any lookup. */
export const proposalId = z.uuid("must be a UUID").transform((s) => s.toLowerCase());

export const openProposalRequest = z.strictObject({
  branch: branchName,
  base_branch: branchName.default("main"),
  title: proposalTitle,
  description: proposalDescription.default(""),
});

export type OpenProposalRequest = z.output<typeof openProposalRequest>;

export const patchProposalRequest = z
  .strictObject({ title: proposalTitle.optional(), description: proposalDescription.optional() })
  .refine((b) => b.title !== undefined || b.description !== undefined, "must set title, description or both");

export type PatchProposalRequest = z.output<typeof patchProposalRequest>;
