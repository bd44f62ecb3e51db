import { createHash } from "node:crypto";

/**
 * The Merkle tree of RFC 9162 (section 2.1): leaf hash SHA-256(0x00 || leaf), node hash
 * SHA-256(0x01 || left || right), the tree of n leaves split at the largest power of two below n.
 * Pure functions, shared by the server (appending, proofs) and the CLI (verification).
 *
 * A node is a complete subtree: (level, idx) covers leaves [idx * 2^level, (idx + 1) * 2^level).
 * Sizes and indexes are plain numbers: arithmetic below uses division, not bit shifts, so it is
 * exact up to 2^53 leaves.
 */
export interface NodeRef {
  level: number;
  idx: number;
}

export interface StoredNode extends NodeRef {
  hash: Buffer;
}

const sha256 = (...parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest();
const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

/** SHA-256(0x00 || leaf). */
export const leafHash = (leaf: Buffer): Buffer => sha256(LEAF, leaf);

/** SHA-256(0x01 || left || right). */
export const nodeHash = (left: Buffer, right: Buffer): Buffer => sha256(NODE, left, right);

const half = (n: number) => Math.floor(n / 2);
const isOdd = (n: number) => n % 2 === 1;

/** The largest power of two strictly below n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** The complete subtrees covering [lo, hi) left to right, largest first, as RFC 9162 splits it. */
function blocksOf(lo: number, hi: number): NodeRef[] {
  const blocks: NodeRef[] = [];
  let start = lo;
  while (start < hi) {
    let level = 0;
    while (2 ** (level + 1) <= hi - start) level++;
    // Every range a proof or root names starts on a multiple of its first block's size.
    blocks.push({ level, idx: Math.floor(start / 2 ** level) });
    start += 2 ** level;
  }
  return blocks;
}

/** The hash of a run of complete subtrees, folded from the right as the RFC's recursion does. */
export function foldRight(hashes: Buffer[]): Buffer {
  const last = hashes.at(-1);
  if (!last) throw new Error("the hash of an empty range is not defined here");
  let acc = last;
  for (let i = hashes.length - 2; i >= 0; i--) acc = nodeHash(hashes[i] as Buffer, acc);
  return acc;
}

/** The hash of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT = createHash("sha256").digest();

/** The root of a tree whose right edge (largest subtree first) is `frontier`. */
export const rootOf = (frontier: Buffer[]): Buffer =>
  frontier.length === 0 ? EMPTY_ROOT : foldRight(frontier);

/** The nodes of a tree of `size` leaves' right edge, largest first: one per bit set in `size`. */
export function frontierRefs(size: number): NodeRef[] {
  return blocksOf(0, size);
}

/**
 * Appends leaf number `size` to a tree of `size` leaves whose right edge is `frontier`: the rows
 * to store (the leaf's hash and every subtree it completes) and the new right edge.
 */
export function appendLeaf(
  frontier: Buffer[],
  size: number,
  leaf: Buffer,
): { nodes: StoredNode[]; frontier: Buffer[] } {
  if (frontier.length !== frontierRefs(size).length)
    throw new Error(
      `a tree of ${size} leaves has ${frontierRefs(size).length} edge subtrees, not ${frontier.length}`,
    );
  const edge = [...frontier];
  let hash = leafHash(leaf);
  const nodes: StoredNode[] = [{ level: 0, idx: size, hash }];
  for (let n = size, level = 0; isOdd(n); ) {
    hash = nodeHash(edge.pop() as Buffer, hash);
    n = half(n);
    level++;
    nodes.push({ level, idx: n, hash });
  }
  edge.push(hash);
  return { nodes, frontier: edge };
}

/** A range of leaves [lo, hi) whose RFC 9162 hash is one element of a proof. */
type Range = [lo: number, hi: number];

/** RFC 9162 2.1.3.1: PATH(m, D[lo:hi]) as ranges, deepest first. */
function inclusionRanges(m: number, lo: number, hi: number, out: Range[]): Range[] {
  if (hi - lo <= 1) return out;
  const k = splitPoint(hi - lo);
  if (m < lo + k) {
    inclusionRanges(m, lo, lo + k, out);
    out.push([lo + k, hi]);
  } else {
    inclusionRanges(m, lo + k, hi, out);
    out.push([lo, lo + k]);
  }
  return out;
}

/** RFC 9162 2.1.4.1: SUBPROOF(m, D[lo:hi], b) as ranges. */
function consistencyRanges(m: number, lo: number, hi: number, whole: boolean, out: Range[]): Range[] {
  const n = hi - lo;
  if (m === n) {
    if (!whole) out.push([lo, hi]);
    return out;
  }
  const k = splitPoint(n);
  if (m <= k) {
    consistencyRanges(m, lo, lo + k, whole, out);
    out.push([lo + k, hi]);
  } else {
    consistencyRanges(m - k, lo + k, hi, false, out);
    out.push([lo, lo + k]);
  }
  return out;
}

/** What a proof needs read: every stored node its elements fold from, and how to fold them. */
export interface ProofPlan {
  nodes: NodeRef[];
  /** Each proof element as the nodes (indexes into `nodes`) to fold from the right. */
  elements: number[][];
}

function planOf(ranges: Range[]): ProofPlan {
  const nodes: NodeRef[] = [];
  const at = new Map<string, number>();
  const elements = ranges.map(([lo, hi]) =>
    blocksOf(lo, hi).map((ref) => {
      const key = `${ref.level}/${ref.idx}`;
      let i = at.get(key);
      if (i === undefined) {
        i = nodes.push(ref) - 1;
        at.set(key, i);
      }
      return i;
    }),
  );
  return { nodes, elements };
}

/** The nodes behind the inclusion proof of leaf `index` in the tree of `size` leaves. */
export const inclusionPlan = (index: number, size: number): ProofPlan =>
  planOf(inclusionRanges(index, 0, size, []));

/** The nodes behind the consistency proof of the tree of `from` leaves with that of `to` (0 < from <= to). */
export const consistencyPlan = (from: number, to: number): ProofPlan =>
  planOf(consistencyRanges(from, 0, to, true, []));

/** The nodes behind the root of the tree of `size` leaves. */
export const rootPlan = (size: number): ProofPlan => planOf(size === 0 ? [] : [[0, size]]);

/** Folds a plan's nodes, read in the plan's order, into the proof's hashes. */
export function proofFrom(plan: ProofPlan, hashes: Buffer[]): Buffer[] {
  return plan.elements.map((element) =>
    foldRight(
      element.map((i) => {
        const h = hashes[i];
        if (!h) throw new Error(`the log has no node ${JSON.stringify(plan.nodes[i])}`);
        return h;
      }),
    ),
  );
}
