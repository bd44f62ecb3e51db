import type { RepoRow } from "../access/roles.ts";
import type { AppContext } from "../context.ts";
import { firstRowOf, prepared } from "../db/pool.ts";
import { fail } from "../errors.ts";
import { logKeyName, logOrigin, rootAt, treeSize } from "./log.ts";
import {
  type Checkpoint,
  checkpointText,
  keyHash,
  parseCheckpointText,
  parseNote,
  parseVerifierKey,
  signatureLine,
  verifyCheckpoint,
} from "./note.ts";

/**
 * Witnesses' cosignatures of checkpoints (docs/verifiable-history.md, "Witnesses"). A witness signs
 * the checkpoint's exact text with its own Ed25519 key as a plain signed-note signature (algorithm
 * 0x01, the kind Go's golang.org/x/mod/sumdb/note verifies; not C2SP cosignature/v1, which signs
 * a timestamped message that package cannot check). The server stores a cosignature only when it
 * verifies against the key it names over the very checkpoint the log signs for that size, and
 * serves the lines of the current size with the checkpoint.
 */

type CosignContext = Pick<AppContext, "pool" | "config" | "selfUrl">;

/** Witnesses per repo and tree size: enough for any real deployment, and bounds the note's length. */
export const MAX_WITNESSES = 32;

export interface CosignatureRequest {
  /** The witness's verifier key, `<name>+<hash>+<base64(0x01 || public key)>`. */
  witness_key: string;
  /** The checkpoint note carrying the witness's signature line (other lines are ignored). */
  checkpoint: string;
}

export interface Cosignature {
  origin: string;
  size: number;
  root: string;
  witness_key: string;
}

// Insert or replace one witness's line, unless MAX_WITNESSES others already cosigned that size.
const tlog_cosignature_put = prepared<{ size: number }>(
  "tlog_cosignature_put",
  `INSERT INTO tlog_cosignatures (repo_id, size, witness_key, line)
   SELECT $1, $2, $3, $4
   WHERE (SELECT count(*) FROM tlog_cosignatures
          WHERE repo_id = $1 AND size = $2 AND witness_key <> $3) < $5
   ON CONFLICT (repo_id, size, witness_key) DO UPDATE SET line = EXCLUDED.line, created_at = now()
   RETURNING size`,
);

function witnessKeyOf(vkey: string, logName: string) {
  let key: { name: string; publicKey: Buffer };
  try {
    key = parseVerifierKey(vkey);
  } catch (e) {
    fail("VALIDATION_FAILED", `witness_key: ${(e as Error).message}`);
  }
  // A line under the log's name would read as a second log signature to a careless verifier.
  if (key.name === logName)
    fail("VALIDATION_FAILED", "witness_key: a witness cannot sign under the log's name");
  return key;
}

/** The witness's signature line of the note, verified; answers the checkpoint it signs and its line. */
function verifiedCosignature(note: string, key: { name: string; publicKey: Buffer }) {
  let parsed: ReturnType<typeof parseNote>;
  let checkpoint: Checkpoint;
  try {
    parsed = parseNote(note);
    checkpoint = parseCheckpointText(parsed.text);
  } catch (e) {
    fail("VALIDATION_FAILED", `checkpoint: ${(e as Error).message}`);
  }
  if (!parsed.signatures.some((s) => s.name === key.name))
    fail("VALIDATION_FAILED", `checkpoint: the note carries no signature line named ${key.name}`);
  try {
    verifyCheckpoint(note, key);
  } catch (e) {
    fail("SIGNATURE_INVALID", `the cosignature does not verify: ${(e as Error).message}`);
  }
  const hash = keyHash(key.name, key.publicKey);
  const mine = parsed.signatures.find((s) => s.name === key.name && s.hash.equals(hash));
  if (!mine) throw new Error("a verified cosignature has no line");
  return { checkpoint, text: parsed.text, line: signatureLine(key.name, key.publicKey, mine.signature) };
}

/**
 * Stores a witness's cosignature of one of the repo's checkpoints. Refuses a malformed request
 * (400), a signature that does not verify (403 SIGNATURE_INVALID), a checkpoint the log never
 * signed, of another repo, size or root (409 CHECKPOINT_UNKNOWN), and a witness past
 * MAX_WITNESSES for that size (409 COSIGNATURES_LIMITED).
 */
export async function addCosignature(
  ctx: CosignContext,
  repo: RepoRow,
  req: CosignatureRequest,
): Promise<Cosignature> {
  const key = witnessKeyOf(req.witness_key, logKeyName(ctx));
  const { checkpoint, text, line } = verifiedCosignature(req.checkpoint, key);
  const signed = await signedText(ctx, repo, checkpoint.size);
  if (signed !== text)
    fail(
      "CHECKPOINT_UNKNOWN",
      `the log never signed that checkpoint: for size ${checkpoint.size} it signs ${JSON.stringify(signed ?? "nothing")}`,
    );
  const vkey = req.witness_key.trim();
  const row = await firstRowOf(
    ctx.pool,
    tlog_cosignature_put([repo.id, checkpoint.size, vkey, line, MAX_WITNESSES]),
  );
  if (!row)
    fail("COSIGNATURES_LIMITED", `${MAX_WITNESSES} witnesses already cosigned size ${checkpoint.size}`);
  return {
    origin: checkpoint.origin,
    size: checkpoint.size,
    root: checkpoint.root.toString("base64"),
    witness_key: vkey,
  };
}

/** The checkpoint text the log signs for the repo's tree of `size` leaves, or null beyond its size. */
async function signedText(ctx: CosignContext, repo: RepoRow, size: number): Promise<string | null> {
  const current = await treeSize(ctx.pool, repo.id);
  if (size > current) return null;
  const root = await rootAt(ctx.pool, repo.id, size);
  return checkpointText({ origin: logOrigin(ctx, repo.name), size, root });
}
