import type { Tx } from "../db/tx.ts";

// The repo's counter row is locked until the opening commits (or rolls back, taking its number
// with it), so concurrent openings get consecutive numbers. Proposals and issues draw from this one
// counter (migration 0014), so `#n` names one item of the repo.
const item_number_next = `
  INSERT INTO item_numbers (repo_id, last_number) VALUES ($1, 1)
  ON CONFLICT (repo_id) DO UPDATE SET last_number = item_numbers.last_number + 1
  RETURNING last_number`;

/** The repo's next `#n`, for a proposal or an issue being opened in `tx`. */
export async function nextItemNumber(tx: Tx, repoId: number): Promise<number> {
  const { rows } = await tx.query<{ last_number: number }>(item_number_next, [repoId]);
  return rows[0]?.last_number as number;
}
