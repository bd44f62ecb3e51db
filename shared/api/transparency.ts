import { z } from "zod";

/** The transparency log's proofs (docs/verifiable-history.md): RFC 9162 hashes, base64 as in checkpoints. */

const base64Hash = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, "a base64 SHA-256 hash");
const count = z.int().nonnegative();

export const inclusionProofResponse = z.object({
  leaf_index: count,
  tree_size: count,
  hashes: z.array(base64Hash),
});
export type InclusionProofResponse = z.output<typeof inclusionProofResponse>;

export const consistencyProofResponse = z.object({
  from: count,
  to: count,
  hashes: z.array(base64Hash),
});
export type ConsistencyProofResponse = z.output<typeof consistencyProofResponse>;

/** A witness's cosignature of a checkpoint (docs/verifiable-history.md, "Witnesses"). */
export const cosignatureRequest = z.strictObject({
  witness_key: z.string().min(1).max(400),
  checkpoint: z.string().min(1).max(8000),
});

export const cosignatureResponse = z.object({
  origin: z.string(),
  size: count,
  root: base64Hash,
  witness_key: z.string(),
});
export type CosignatureResponse = z.output<typeof cosignatureResponse>;
