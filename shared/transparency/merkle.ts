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

/**
 * Nodes below this level are never stored. A leaf is its commit's own hash (read from the commit
 * row, or from the leaf row purge keeps), and the commit that completes a block of
 * 2^STORED_FROM_LEVEL leaves stores the block's node and every larger subtree it completes: 15 of
 * 16 commits write nothing for the log, and a proof hashes at most a block or two of leaves
 * (docs/verifiable-history.md, "How it is stored").
 */
export const STORED_FROM_LEVEL = 4;
const BLOCK = 2 ** STORED_FROM_LEVEL;

/**
 * Reads stored hashes, one per ref and in their order: level 0 gives leaf hashes, levels from
 * STORED_FROM_LEVEL the stored nodes. A ref it cannot find is a broken log: it throws.
 */
export type NodeReader = (refs: NodeRef[]) => Promise<Buffer[]>;

const keyOf = (ref: NodeRef) => `${ref.level}/${ref.idx}`;

/** The leaves under a node, as level-0 refs. */
const leavesUnder = (ref: NodeRef): NodeRef[] =>
  Array.from({ length: 2 ** ref.level }, (_, k) => ({ level: 0, idx: ref.idx * 2 ** ref.level + k }));

/** A complete subtree's hash from its leaf hashes (a power of two of them), pairwise upwards. */
function subtreeOf(leafHashes: Buffer[]): Buffer {
  let row = leafHashes;
  while (row.length > 1)
    row = Array.from({ length: row.length / 2 }, (_, k) =>
      nodeHash(row[2 * k] as Buffer, row[2 * k + 1] as Buffer),
    );
  return row[0] as Buffer;
}

/**
 * The hashes of any complete subtrees, in one read: a stored one as it is, a lower one from its
 * leaves. A leaf and a stored node are the same thing whichever ref asks for it, so each is read once.
 */
export async function resolveNodes(refs: NodeRef[], read: NodeReader): Promise<Buffer[]> {
  const wanted = new Map<string, NodeRef>();
  for (const ref of refs)
    for (const r of ref.level === 0 || ref.level >= STORED_FROM_LEVEL ? [ref] : leavesUnder(ref))
      wanted.set(keyOf(r), r);
  const list = [...wanted.values()];
  const hashes = await read(list);
  const got = new Map(list.map((r, i) => [keyOf(r), hashes[i] as Buffer]));
  return refs.map(
    (ref) => got.get(keyOf(ref)) ?? subtreeOf(leavesUnder(ref).map((l) => got.get(keyOf(l)) as Buffer)),
  );
}

/**
 * The nodes the commit of leaf `index` stores: none, unless its leaf completes a block; then the
 * block's node, hashed from its leaves, and each larger subtree that completes with it, from the
 * stored left sibling at each level.
 */
export async function nodesCompletedBy(index: number, leaf: Buffer, read: NodeReader): Promise<StoredNode[]> {
  if ((index + 1) % BLOCK !== 0) return [];
  const block = { level: STORED_FROM_LEVEL, idx: (index + 1) / BLOCK - 1 };
  const siblings: NodeRef[] = [];
  for (let n = block.idx, level = block.level; isOdd(n); n = half(n), level++)
    siblings.push({ level, idx: n - 1 });
  const earlier = leavesUnder(block).slice(0, -1);
  const hashes = await read([...earlier, ...siblings]);
  let hash = subtreeOf([...hashes.slice(0, earlier.length), leafHash(leaf)]);
  const nodes: StoredNode[] = [{ ...block, hash }];
  siblings.forEach((sibling, k) => {
    hash = nodeHash(hashes[earlier.length + k] as Buffer, hash);
    nodes.push({ level: sibling.level + 1, idx: half(sibling.idx), hash });
  });
  return nodes;
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
