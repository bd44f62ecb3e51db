import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  appendLeaf,
  consistencyPlan,
  EMPTY_ROOT,
  inclusionPlan,
  leafHash,
  nodeHash,
  type ProofPlan,
  proofFrom,
  rootOf,
  rootPlan,
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

/** A tree grown leaf by leaf with appendLeaf, its stored nodes kept in a map as the table keeps them. */
function grow(size: number) {
  const stored = new Map<string, Buffer>();
  let frontier: Buffer[] = [];
  const frontiers: Buffer[][] = [frontier];
  for (let i = 0; i < size; i++) {
    const next = appendLeaf(frontier, i, leafOf(i));
    for (const n of next.nodes) stored.set(`${n.level}/${n.idx}`, n.hash);
    frontier = next.frontier;
    frontiers.push(frontier);
  }
  const read = (plan: ProofPlan) =>
    proofFrom(
      plan,
      plan.nodes.map((n) => stored.get(`${n.level}/${n.idx}`)!),
    );
  return { stored, frontiers, read };
}

const leaves = Array.from({ length: 70 }, (_, i) => leafOf(i));
const tree = grow(70);

describe("the transparency log's tree", () => {
  it("keeps the right edge whose root is RFC 9162's MTH at every size", () => {
    for (let n = 0; n <= 70; n++)
      expect(rootOf(tree.frontiers[n]!).equals(mth(leaves.slice(0, n)))).toBe(true);
  });

  it("reads every root from stored nodes", () => {
    for (let n = 1; n <= 70; n++)
      expect(tree.read(rootPlan(n))[0]!.equals(mth(leaves.slice(0, n)))).toBe(true);
  });

  it("stores two nodes per leaf at most on average", () => {
    expect(tree.stored.size).toBeLessThan(2 * 70);
  });

  it("answers inclusion proofs that RFC 9162's verifier accepts, and only for their own leaf", () => {
    for (let n = 1; n <= 70; n++) {
      const root = mth(leaves.slice(0, n));
      for (let i = 0; i < n; i++) {
        const proof = tree.read(inclusionPlan(i, n));
        expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(n)));
        expect(verifyInclusion(i, n, leaves[i]!, proof, root)).toBe(true);
        expect(verifyInclusion(i, n, leaves[(i + 1) % 70]!, proof, root)).toBe(false);
      }
    }
  });

  it("answers consistency proofs that RFC 9162's verifier accepts, and refuses a forked tree", () => {
    const forked = [...leaves];
    forked[5] = leafOf(1000);
    for (let to = 1; to <= 70; to++) {
      for (let from = 1; from <= to; from++) {
        const proof = tree.read(consistencyPlan(from, to));
        const fromRoot = mth(leaves.slice(0, from));
        const toRoot = mth(leaves.slice(0, to));
        expect(verifyConsistency(from, to, fromRoot, toRoot, proof)).toBe(true);
        if (from > 5)
          expect(verifyConsistency(from, to, mth(forked.slice(0, from)), toRoot, proof)).toBe(false);
      }
    }
  });

  it("refuses a proof with an element dropped", () => {
    const proof = tree.read(inclusionPlan(9, 70));
    expect(verifyInclusion(9, 70, leaves[9]!, proof.slice(1), mth(leaves))).toBe(false);
    const cproof = tree.read(consistencyPlan(33, 70));
    expect(verifyConsistency(33, 70, mth(leaves.slice(0, 33)), mth(leaves), cproof.slice(0, -1))).toBe(false);
  });
});
