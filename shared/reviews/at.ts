import type { BranchRow } from "../branches/branches.ts";
import { fail } from "../errors.ts";

/**
 * The sequence a list read at `at` stops at: `at` itself, or the branch head when `at` is absent.
 * An `at` beyond the head is refused, as every read at (branch, at) refuses it, so an answer at
 * (branch, at) never changes once given.
 */
export function upToAt(branch: BranchRow, at: number | undefined): number {
  if (at === undefined) return branch.head_sequence;
  if (at > branch.head_sequence)
    fail(
      "SEQUENCE_OUT_OF_RANGE",
      `query.at: ${at} is beyond the head of '${branch.name}' (${branch.head_sequence})`,
    );
  return at;
}
