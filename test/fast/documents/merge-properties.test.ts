import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { mergeDocument } from "../../../shared/documents/merge/index.ts";

/*
 * Properties of the structured merge over random documents: two sides edit disjoint parts of a
 * random base (keys, nested keys, elements of an identity array, additions of their own), and the
 * merge must hold both edits whichever side is ours, give the other side when one changed
 * nothing, and always parse.
 */

type Doc = { top: Record<string, unknown>; items: { id: string; v: unknown }[] };
type Side = "ours" | "theirs";

const scalar = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null));
const key = fc.stringMatching(/^[a-z]{1,6}$/);
const base = fc.record({
  top: fc.dictionary(key, fc.oneof(scalar, fc.dictionary(key, scalar, { maxKeys: 4 })), { maxKeys: 8 }),
  items: fc.uniqueArray(fc.record({ id: fc.stringMatching(/^e[0-9]{1,3}$/), v: scalar }), {
    selector: (e) => e.id,
    maxLength: 6,
  }),
});
const action = fc.record({
  owner: fc.constantFrom("none", "ours", "theirs"),
  kind: fc.constantFrom("set", "delete", "nested"),
  value: scalar,
  nestedKey: key,
});
const additions = fc.dictionary(key, scalar, { maxKeys: 3 });
const plan = fc.record({
  actions: fc.array(action, { minLength: 14, maxLength: 14 }),
  adds: fc.record({ ours: additions, theirs: additions }),
});

type Plan = typeof plan extends fc.Arbitrary<infer P> ? P : never;

/**
 * `doc` with `side`'s edits of `base`: the keys and elements of the base the plan gives that side,
 * and its own additions (prefixed, so the sides never add the same key).
 */
function edited(doc: Doc, p: Plan, side: Side, base: Doc = doc): Doc {
  const out: Doc = structuredClone(doc);
  const actionAt = (i: number) => p.actions[i % p.actions.length];
  Object.keys(base.top).forEach((k, i) => {
    const a = actionAt(i);
    if (!a || a.owner !== side) return;
    const current = out.top[k];
    if (a.kind === "delete") delete out.top[k];
    else if (a.kind === "nested" && typeof current === "object" && current !== null)
      (current as Record<string, unknown>)[a.nestedKey] = a.value;
    else out.top[k] = a.value === current ? `${String(a.value)}!` : a.value;
  });
  base.items.forEach((item, i) => {
    const a = actionAt(i + 7);
    if (!a || a.owner !== side) return;
    const at = out.items.findIndex((e) => e.id === item.id);
    if (a.kind === "delete") out.items.splice(at, 1);
    else out.items[at] = { ...item, v: a.value === item.v ? `${String(a.value)}!` : a.value };
  });
  const prefix = side === "ours" ? "o" : "t";
  for (const [k, v] of Object.entries(p.adds[side])) out.top[`${prefix}_${k}`] = v;
  for (const [k, v] of Object.entries(p.adds[side])) out.items.push({ id: `${prefix}-${k}`, v });
  return out;
}

/** Both sides' edits applied: they touch disjoint parts, so their order does not matter. */
const both = (doc: Doc, p: Plan): Doc => edited(edited(doc, p, "ours"), p, "theirs", doc);

const sorted = (doc: Doc) => ({ top: doc.top, items: [...doc.items].sort((a, b) => (a.id < b.id ? -1 : 1)) });

const formats = [
  { name: "JSON", file: "doc.json", write: (d: Doc) => `${JSON.stringify(d, null, 2)}\n`, read: JSON.parse },
  { name: "YAML", file: "doc.yaml", write: (d: Doc) => stringifyYaml(d), read: (t: string) => parseYaml(t) },
] as const;

describe.each(formats)("structured merge of random $name documents", ({ file, write, read }) => {
  const merged = (b: string, o: string, t: string) => {
    const m = mergeDocument(file, b, o, t);
    if (!("content" in m)) throw new Error(`conflicts: ${JSON.stringify(m.conflicts)}`);
    return m.content;
  };

  it("holds both sides' edits, whichever side is ours, and parses", () => {
    fc.assert(
      fc.property(base, plan, (doc, p) => {
        const [b, o, t] = [write(doc), write(edited(doc, p, "ours")), write(edited(doc, p, "theirs"))];
        const one = merged(b, o, t);
        const other = merged(b, t, o);
        const expected = sorted(both(doc, p));
        expect(sorted(read(one))).toEqual(expected);
        expect(sorted(read(other))).toEqual(expected);
        expect(read(one)).toEqual(read(other));
      }),
      { numRuns: 150 },
    );
  });

  it("gives the other side exactly when one side changed nothing", () => {
    fc.assert(
      fc.property(base, plan, (doc, p) => {
        const [b, o] = [write(doc), write(edited(doc, p, "ours"))];
        expect(merged(b, o, b)).toBe(o);
        expect(merged(b, b, o)).toBe(o);
      }),
      { numRuns: 100 },
    );
  });

  it("writes the merge as the base is written when the base is in the writer's own style", () => {
    fc.assert(
      fc.property(base, plan, (doc, p) => {
        const [b, o, t] = [write(doc), write(edited(doc, p, "ours")), write(edited(doc, p, "theirs"))];
        const content = merged(b, o, t);
        expect(content).toBe(write(read(content)));
      }),
      { numRuns: 100 },
    );
  });
});
