import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  consistencyPlan,
  EMPTY_ROOT,
  inclusionPlan,
  leafHash,
  type NodeReader,
  nodeHash,
  nodesCompletedBy,
  type ProofPlan,
  proofFrom,
  resolveNodes,
  rootPlan,
  STORED_FROM_LEVEL,
} from "../../shared/transparency/merkle.ts";
import { verifyConsistency, verifyInclusion } from "../../shared/transparency/verify.ts";

const leafOf = (i: number) => createHash("sha256").update(`commit ${i}`).digest();

/** MTH(D[lo:hi]) straight from RFC 9162 2.1.1, recursively over the leaves. */
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leafHash(leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/**
 * A tree grown leaf by leaf as commits grow it: the leaves readable as the commits' hashes are,
 * and the nodes each append completes kept in a map as tlog_nodes keeps them. Every read is
 * counted, and refused beyond the current size, as no commit past it exists.
 */
async function grow(size: number) {
  const stored = new Map<string, Buffer>();
  let appended = 0;
  const reads: number[] = [];
  const reader: NodeReader = async (refs) => {
    reads.push(refs.length);
    return refs.map((r) => {
      const hash =
        r.level === 0 && r.idx < appended ? leafHash(leafOf(r.idx)) : stored.get(`${r.level}/${r.idx}`);
      if (!hash) throw new Error(`no node ${r.level}/${r.idx}`);
      return hash;
    });
  };
  for (let i = 0; i < size; i++) {
    for (const n of await nodesCompletedBy(i, leafOf(i), reader)) stored.set(`${n.level}/${n.idx}`, n.hash);
    appended++;
  }
  const read = async (plan: ProofPlan) => proofFrom(plan, await resolveNodes(plan.nodes, reader));
  return { stored, reads, read };
}

const leaves = Array.from({ length: 70 }, (_, i) => leafOf(i));
const tree = await grow(70);

describe("the transparency log's tree", () => {
  it("reads every root, RFC 9162's MTH, from its leaves and stored nodes", async () => {
    for (let n = 1; n <= 70; n++)
      expect((await tree.read(rootPlan(n)))[0]!.equals(mth(leaves.slice(0, n)))).toBe(true);
  });

  it("stores only the subtrees of a block and above, written by the commit that completes them", () => {
    // 70 leaves: the blocks [0, 16) to [48, 64), the two of 32 and the one of 64.
    expect([...tree.stored.keys()].sort()).toEqual(["4/0", "4/1", "4/2", "4/3", "5/0", "5/1", "6/0"]);
    for (const [key, hash] of tree.stored) {
      const [level, idx] = key.split("/").map(Number) as [number, number];
      expect(level).toBeGreaterThanOrEqual(STORED_FROM_LEVEL);
      expect(hash.equals(mth(leaves.slice(idx * 2 ** level, (idx + 1) * 2 ** level)))).toBe(true);
    }
  });

  it("reads the stored hashes a proof needs in one read, the leaves of a block or two among them", async () => {
    const grown = await grow(1000);
    grown.reads.length = 0;
    await grown.read(inclusionPlan(997, 1000));
    await grown.read(consistencyPlan(500, 999));
    expect(grown.reads.length).toBe(2);
    for (const count of grown.reads) expect(count).toBeLessThanOrEqual(2 * 2 ** STORED_FROM_LEVEL + 10);
  });

  it("answers inclusion proofs that RFC 9162's verifier accepts, and only for their own leaf", async () => {
    for (let n = 1; n <= 70; n++) {
      const root = mth(leaves.slice(0, n));
      for (let i = 0; i < n; i++) {
        const proof = await tree.read(inclusionPlan(i, n));
        expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(n)));
        expect(verifyInclusion(i, n, leaves[i]!, proof, root)).toBe(true);
        expect(verifyInclusion(i, n, leaves[(i + 1) % 70]!, proof, root)).toBe(false);
      }
    }
  });

  it("answers consistency proofs that RFC 9162's verifier accepts, and refuses a forked tree", async () => {
    const forked = [...leaves];
    forked[5] = leafOf(1000);
    for (let to = 1; to <= 70; to++) {
      for (let from = 1; from <= to; from++) {
        const proof = await tree.read(consistencyPlan(from, to));
        const fromRoot = mth(leaves.slice(0, from));
        const toRoot = mth(leaves.slice(0, to));
        expect(verifyConsistency(from, to, fromRoot, toRoot, proof)).toBe(true);
        if (from > 5)
          expect(verifyConsistency(from, to, mth(forked.slice(0, from)), toRoot, proof)).toBe(false);
      }
    }
  });

  it("refuses a proof with an element dropped", async () => {
    const proof = await tree.read(inclusionPlan(9, 70));
    expect(verifyInclusion(9, 70, leaves[9]!, proof.slice(1), mth(leaves))).toBe(false);
    const cproof = await tree.read(consistencyPlan(33, 70));
    expect(verifyConsistency(33, 70, mth(leaves.slice(0, 33)), mth(leaves), cproof.slice(0, -1))).toBe(false);
  });
});
