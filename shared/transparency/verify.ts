import { leafHash, nodeHash } from "./merkle.ts";

/**
 * The verification algorithms of RFC 9162 (2.1.3.2 and 2.1.4.2), written from the RFC's text and
 * independent of how the server builds proofs (shared/transparency/merkle.ts): what the CLI and the
 * tests run. Each answers whether the proof holds; none throws on a bad proof.
 */

const half = (n: number) => Math.floor(n / 2);
const isOdd = (n: number) => n % 2 === 1;

/** Shifts fn and sn right together until fn's lowest bit is set or fn is 0. */
function dropEvenLevels(fn: number, sn: number): [number, number] {
  while (!isOdd(fn) && fn !== 0) {
    fn = half(fn);
    sn = half(sn);
  }
  return [fn, sn];
}

/** Whether `proof` shows that `leaf` (the raw commit hash) is leaf `index` of the tree of `size` leaves with `root`. */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Buffer,
  proof: Buffer[],
  root: Buffer,
): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHash(leaf);
  for (const p of proof) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!isOdd(fn)) [fn, sn] = dropEvenLevels(fn, sn);
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && r.equals(root);
}

/** Whether `proof` shows that the tree of `from` leaves with `fromRoot` is a prefix of that of `to` with `toRoot`. */
export function verifyConsistency(
  from: number,
  to: number,
  fromRoot: Buffer,
  toRoot: Buffer,
  proof: Buffer[],
): boolean {
  if (from > to || from < 0) return false;
  if (from === to) return proof.length === 0 && fromRoot.equals(toRoot);
  // The empty tree is a prefix of every tree; there is nothing to prove.
  if (from === 0) return proof.length === 0;
  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : proof;
  const [first, ...rest] = path;
  if (!first) return false;
  let fn = from - 1;
  let sn = to - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = first;
  let sr = first;
  for (const c of rest) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!isOdd(fn)) [fn, sn] = dropEvenLevels(fn, sn);
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && fr.equals(fromRoot) && sr.equals(toRoot);
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && !isOdd(n)) n = half(n);
  return n === 1;
}
