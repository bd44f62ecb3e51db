import type { LogVerification } from "./verify.ts";

const b64 = (b: Buffer) => b.toString("base64");

/** What `quire verify` checked, one line per step. */
export function verificationLines(r: LogVerification): string[] {
  const { audit, commits } = r;
  const cp = audit.checkpoint;
  const lines = [
    `checkpoint: ${cp.origin}, size ${cp.size}, root ${b64(cp.root)}, signature by ${audit.keyName} valid`,
  ];
  for (const w of audit.witnesses) lines.push(`cosigned by the witness ${w}: signature valid`);
  const prev = audit.previous;
  lines.push(
    prev
      ? `extends the checkpoint seen ${prev.seenAt} (size ${prev.checkpoint.size}, root ${b64(prev.checkpoint.root)}): consistency proof of ${prev.proofHashes} hash(es) holds`
      : "no checkpoint of this repo seen before on this machine: remembered for next time",
  );
  for (const c of commits)
    lines.push(
      `commit ${c.sequence}${c.head_of ? ` (head of ${c.head_of})` : ""}: recomputed ${c.hash.slice(0, 12)}…, inclusion proof of ${c.proof_hashes} hash(es) holds`,
    );
  return lines;
}

/** The same as JSON. */
export function verificationJson(r: LogVerification) {
  const cp = r.audit.checkpoint;
  const prev = r.audit.previous;
  return {
    ok: true,
    repo: r.audit.repo,
    checkpoint: { origin: cp.origin, size: cp.size, root: b64(cp.root), key: r.audit.keyName },
    witnesses: r.audit.witnesses,
    previous: prev
      ? {
          size: prev.checkpoint.size,
          root: b64(prev.checkpoint.root),
          seen_at: prev.seenAt,
          proof_hashes: prev.proofHashes,
        }
      : null,
    commits: r.commits,
  };
}
