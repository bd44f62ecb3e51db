import {
  type Document,
  isMap,
  isNode,
  isScalar,
  isSeq,
  type Node,
  Pair,
  parseAllDocuments,
  type ToStringOptions,
  YAMLMap,
  YAMLSeq,
} from "yaml";
import type { DocumentConflict, DocumentMerge } from "./result.ts";
import { mergeText } from "./text.ts";
import {
  ABSENT,
  equal,
  identityField,
  identityOf,
  mergeOrder,
  mergeValues,
  type ValueMergeOptions,
} from "./values.ts";

/*
 * YAML merges by the data's rules (values.ts), and is then written from the nodes of the three
 * parsed documents (the `yaml` package's Document API): a key or element one side left alone
 * comes from the other side's document with its comments, anchors, quoting and blank lines, so
 * what neither side touched is written as the base had it.
 */

/**
 * The largest YAML version merged by structure. Reading YAML with its comments, merging its nodes
 * and writing it back costs about 4 s of CPU per megabyte (0.25 s just under this bound): above
 * it the file merges by lines, so no merge, branch status or diff request spends more than a
 * fraction of a second on one file (docs/merge.md, "Large files"). A size, not a time budget, so
 * the answer does not depend on how busy the server is.
 */
export const MAX_STRUCTURED_YAML_BYTES = 64 * 1024;

/** Whether one of the versions is past the bound: the file is not read whole (yaml-narrow.ts). */
export const tooLargeForYaml = (texts: readonly string[], bound = MAX_STRUCTURED_YAML_BYTES): boolean =>
  texts.some((text) => text.length > bound);

type Docs = Document.Parsed[];
type Slot = Node | null | typeof ABSENT;

/** A node that cannot be merged from the documents (the data merge says it can): write nothing. */
class Unmergeable extends Error {}

function parseDocs(text: string): Docs | null {
  const docs = parseAllDocuments(text, { prettyErrors: false });
  if (!Array.isArray(docs)) return null;
  if (docs.some((d) => d.errors.length > 0 || d.warnings.length > 0)) return null;
  return docs;
}

function toData(doc: Document.Parsed): unknown {
  return doc.toJS({ maxAliasCount: 1000 });
}

/** A side's documents and text: a node's text is read from its source range. */
interface Side {
  doc: Document.Parsed;
  text: string;
}

/** The merge of one document's nodes, following the data merge's decisions. */
class NodeMerger {
  readonly #sides: [Side, Side, Side];
  readonly #options: ValueMergeOptions;

  constructor(sides: [Side, Side, Side], options: ValueMergeOptions) {
    this.#sides = sides;
    this.#options = options;
  }

  #data(slot: Slot, side: number): unknown {
    if (slot === ABSENT || slot === null) return slot;
    return slot.toJS(this.#sides[side]?.doc as Document, { maxAliasCount: 1000 });
  }

  /** The node's text and comments: two nodes with the same data and signature read the same. */
  #signature(slot: Slot | Pair, side: number): string {
    if (slot === ABSENT) return "\u0001absent";
    if (slot === null) return "";
    if (slot instanceof Pair)
      return `${this.#signature(slot.key as Node, side)}\0${this.#signature(slot.value as Slot, side)}`;
    if (!isNode(slot)) return String(slot);
    const text = this.#sides[side]?.text ?? "";
    const range = slot.range ? text.slice(slot.range[0], slot.range[2]) : "";
    return `${range}\0${slot.commentBefore ?? ""}\0${slot.comment ?? ""}\0${slot.spaceBefore ?? false}`;
  }

  #same(a: Slot, aSide: number, b: Slot, bSide: number): boolean {
    return (
      equal(this.#data(a, aSide), this.#data(b, bSide)) &&
      this.#signature(a, aSide) === this.#signature(b, bSide)
    );
  }

  merge(base: Slot, ours: Slot, theirs: Slot): Slot {
    if (this.#same(base, 0, ours, 1)) return theirs;
    if (this.#same(base, 0, theirs, 2)) return ours;
    const [b, o, t] = [this.#data(base, 0), this.#data(ours, 1), this.#data(theirs, 2)];
    if (equal(o, t) || equal(b, t)) return ours;
    if (equal(b, o)) return theirs;
    const baseMapOrNone = base === ABSENT || base === null || isMap(base);
    if (isMap(ours) && isMap(theirs) && baseMapOrNone)
      return this.#maps(isMap(base) ? base : undefined, ours, theirs);
    const baseSeqOrNone = base === ABSENT || base === null || isSeq(base);
    if (isSeq(ours) && isSeq(theirs) && baseSeqOrNone) {
      const arrays = [Array.isArray(b) ? b : [], o as unknown[], t as unknown[]];
      const field = identityField(arrays, this.#options.identity);
      if (field) return this.#seqs(field, isSeq(base) ? base : undefined, ours, theirs);
    }
    throw new Unmergeable();
  }

  #maps(base: YAMLMap | undefined, ours: YAMLMap, theirs: YAMLMap): YAMLMap {
    const [b, o, t] = [pairsOf(base), pairsOf(ours), pairsOf(theirs)];
    const out = new YAMLMap();
    copyLook(lookOf(base, ours, theirs), out);
    for (const key of mergeOrder([...b.keys()], [...o.keys()], [...t.keys()])) {
      const [bp, op, tp] = [b.get(key), o.get(key), t.get(key)];
      const pair = this.#pair(bp, op, tp);
      if (pair) out.items.push(pair);
    }
    return emptyAsFlow(out);
  }

  #pair(bp: Pair | undefined, op: Pair | undefined, tp: Pair | undefined): Pair | undefined {
    if (this.#samePair(bp, 0, op, 1)) return tp;
    if (this.#samePair(bp, 0, tp, 2)) return op;
    if (!op || !tp) throw new Unmergeable();
    const value = this.merge(bp ? (bp.value as Slot) : ABSENT, op.value as Slot, tp.value as Slot);
    if (value === op.value) return op;
    if (value === tp.value) return tp;
    return new Pair(op.key, value);
  }

  #samePair(a: Pair | undefined, aSide: number, b: Pair | undefined, bSide: number): boolean {
    if (!a || !b) return a === b;
    return (
      this.#same(a.value as Slot, aSide, b.value as Slot, bSide) &&
      this.#signature(a.key as Node, aSide) === this.#signature(b.key as Node, bSide)
    );
  }

  #seqs(field: string, base: YAMLSeq | undefined, ours: YAMLSeq, theirs: YAMLSeq): YAMLSeq {
    const byId = (seq: YAMLSeq | undefined, side: number) =>
      new Map(
        (seq?.items ?? []).map((item) => {
          const data = this.#data(item as Slot, side) as Record<string, unknown>;
          return [identityOf(data[field]) as string, item as Slot];
        }),
      );
    const [b, o, t] = [byId(base, 0), byId(ours, 1), byId(theirs, 2)];
    const out = new YAMLSeq();
    copyLook(lookOf(base, ours, theirs), out);
    for (const id of mergeOrder([...b.keys()], [...o.keys()], [...t.keys()])) {
      const item = this.merge(b.get(id) ?? ABSENT, o.get(id) ?? ABSENT, t.get(id) ?? ABSENT);
      if (item !== ABSENT) out.items.push(item);
    }
    return emptyAsFlow(out);
  }
}

/** A map's pairs by key text; a map with a key that is not a scalar cannot be merged by node. */
function pairsOf(map: YAMLMap | undefined): Map<string, Pair> {
  const pairs = new Map<string, Pair>();
  for (const pair of map?.items ?? []) {
    if (!isScalar(pair.key)) throw new Unmergeable();
    pairs.set(String(pair.key.value), pair as Pair);
  }
  return pairs;
}

/**
 * The collection whose look a merged one takes: the base's, else ours; an empty one is skipped, as
 * YAML writes an empty collection in flow style (`[]`) whatever the file's style.
 */
function lookOf<T extends YAMLMap | YAMLSeq>(base: T | undefined, ours: T, theirs: T): T {
  return [base, ours, theirs].find((c): c is T => c !== undefined && c.items.length > 0) ?? ours;
}

/**
 * A collection the merge emptied is written `{}` or `[]` after its key, as YAML writes any empty
 * one: a block collection with no items would put its `{}` on a line of its own.
 */
function emptyAsFlow<T extends YAMLMap | YAMLSeq>(collection: T): T {
  if (collection.items.length === 0) collection.flow = true;
  return collection;
}

/** A merged collection is written as ours is: flow or block, its tag, anchor and comments. */
function copyLook(from: YAMLMap | YAMLSeq, to: YAMLMap | YAMLSeq): void {
  to.flow = from.flow ?? false;
  if (from.tag) to.tag = from.tag;
  if (from.anchor) to.anchor = from.anchor;
  if (from.commentBefore) to.commentBefore = from.commentBefore;
  if (from.comment) to.comment = from.comment;
  if (from.spaceBefore) to.spaceBefore = from.spaceBefore;
}

/** Writing options that reproduce `text` from its own documents, if some do. */
function styleOf(docs: Docs, text: string): ToStringOptions | undefined {
  const indents = [...text.matchAll(/^( +)[^\s#]/gm)].map((m) => m[1]?.length ?? 2);
  const indent = indents.length > 0 ? Math.max(1, Math.min(8, ...indents)) : 2;
  for (const indentSeq of [true, false])
    for (const flowCollectionPadding of [true, false]) {
      const options = { lineWidth: 0, minContentWidth: 0, indent, indentSeq, flowCollectionPadding };
      if (render(docs, options, text) === text) return options;
    }
  return undefined;
}

function render(docs: readonly Document[], options: ToStringOptions, like: string): string {
  const out = docs.map((d) => d.toString(options)).join("");
  return like.endsWith("\n") ? out : out.replace(/\n$/, "");
}

/** The merged documents written out, or null when they do not read back as the merged data. */
function written(
  sides: [Docs, Docs, Docs],
  texts: [string, string, string],
  merged: unknown[],
  options: ValueMergeOptions,
  style: ToStringOptions,
): string | null {
  const [base, ours, theirs] = sides;
  try {
    const docs = ours.map((doc, i) => {
      const sidesOf: [Side, Side, Side] = [
        { doc: base[i] as Document.Parsed, text: texts[0] },
        { doc, text: texts[1] },
        { doc: theirs[i] as Document.Parsed, text: texts[2] },
      ];
      const merger = new NodeMerger(sidesOf, options);
      const contents = merger.merge(base[i]?.contents ?? null, doc.contents, theirs[i]?.contents ?? null);
      const out: Document = doc.clone();
      out.contents = contents === ABSENT ? null : contents;
      const commentsFrom = base[i]?.commentBefore === doc.commentBefore ? theirs[i] : doc;
      out.commentBefore = commentsFrom?.commentBefore ?? null;
      out.comment = (base[i]?.comment === doc.comment ? theirs[i] : doc)?.comment ?? null;
      return out;
    });
    const text = render(docs, style, texts[0]);
    const reread = parseDocs(text);
    if (!reread || reread.length !== merged.length) return null;
    return reread.every((d, i) => equal(toData(d), merged[i])) ? text : null;
  } catch (err) {
    if (err instanceof Unmergeable) return null;
    throw err;
  }
}

/**
 * The structural merge of three YAML texts, document by document, or null when one does not
 * parse or they hold different numbers of documents (the caller merges them as text).
 */
export function mergeYaml(
  base: string,
  ours: string,
  theirs: string,
  options: ValueMergeOptions = {},
): DocumentMerge | null {
  if (tooLargeForYaml([base, ours, theirs])) return mergeText(base, ours, theirs);
  const b = parseDocs(base);
  const o = parseDocs(ours);
  const t = parseDocs(theirs);
  if (!b || !o || !t || b.length !== o.length || b.length !== t.length || b.length === 0) return null;
  const conflicts: DocumentConflict[] = [];
  const merged: unknown[] = [];
  b.forEach((doc, i) => {
    const m = mergeValues(
      toData(doc),
      toData(o[i] as Document.Parsed),
      toData(t[i] as Document.Parsed),
      options,
    );
    if ("conflicts" in m)
      conflicts.push(...m.conflicts.map((c) => (b.length > 1 ? { ...c, document: i } : c)));
    else merged.push(m.value);
  });
  if (conflicts.length > 0) return { conflicts };
  const style = styleOf(b, base);
  if (!style) {
    const lines = mergeText(base, ours, theirs);
    if ("content" in lines && sameData(lines.content, merged)) return lines;
  }
  const text = written([b, o, t], [base, ours, theirs], merged, options, style ?? defaultStyle);
  if (text !== null) return { content: text };
  // The nodes could not be combined (a key that is not a scalar, an anchor left behind): the
  // line merge, if it means the merged data; else the whole document is one conflict.
  const lines = mergeText(base, ours, theirs);
  if ("content" in lines && !sameData(lines.content, merged))
    return { conflicts: [{ path: "", base: base, ours: ours, theirs: theirs }] };
  return lines;
}

const defaultStyle: ToStringOptions = { lineWidth: 0, minContentWidth: 0 };

function sameData(text: string, merged: unknown[]): boolean {
  const docs = parseDocs(text);
  return docs !== null && docs.length === merged.length && docs.every((d, i) => equal(toData(d), merged[i]));
}
