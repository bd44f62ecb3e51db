import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { mergeDocument } from "../../../shared/documents/merge/index.ts";
import type { DocumentConflict } from "../../../shared/documents/merge/result.ts";
import { mergeText } from "../../../shared/documents/merge/text.ts";
import { MAX_STRUCTURED_YAML_BYTES } from "../../../shared/documents/merge/yaml.ts";
import { mergeYamlFile } from "../../../shared/documents/merge/yaml-narrow.ts";

/*
 * The narrowed merge of a YAML file past the structured bound (yaml-narrow.ts) against the whole
 * document's structured merge, on the same random documents: the bound is lowered through
 * `mergeYamlFile`'s parameter to just under the documents' size, so the one merge reads them whole
 * and the other by slices. Where the narrowed merge answers (`merged_as: yaml`) it must be the
 * whole merge's answer: the same text, or the same conflicts; where it gives up, the line merge's.
 */

const word = fc.stringMatching(/^[a-z]{1,8}$/);
const item = (id: string) =>
  fc.record({
    id: fc.constant(id),
    title: word,
    weight: fc.integer({ min: 0, max: 999 }),
    tags: fc.array(word, { maxLength: 3 }),
    limits: fc.record({ read: fc.integer({ min: 0, max: 9 }), write: fc.integer({ min: 0, max: 9 }) }),
  });
const ids = fc.uniqueArray(fc.integer({ min: 0, max: 99 }), { minLength: 1, maxLength: 10 });
const doc = ids.chain((ns) =>
  fc.record({
    settings: fc.record({
      max_files: fc.integer({ min: 0, max: 999 }),
      owners: fc.array(word, { maxLength: 3 }),
    }),
    items: fc.tuple(...ns.map((n) => item(`e${n}`))),
    extra: fc.dictionary(word, fc.oneof(word, fc.integer()), { maxKeys: 4 }),
  }),
);
type Doc = typeof doc extends fc.Arbitrary<infer D> ? D : never;

const FIELDS = ["title", "weight", "tags", "read", "write", "delete", "insert", "reorder"] as const;
/**
 * One side's edit: of an element's field (by position), of the settings, or a key of its own; or
 * moving a key of an element to its end (what the narrowed merge must not split). Elements are not
 * moved: the lines that do not conflict merge as lines, as for any file past the bound, and a
 * moved element is there a deletion and an addition, where the whole merge keeps the base's order
 * or sees a conflict (the examples below cover an element moved across a slice).
 */
const edit = fc.record({
  at: fc.nat(),
  field: fc.constantFrom(...FIELDS, "max_files", "owners", "extra"),
  value: word,
  n: fc.integer({ min: 0, max: 999 }),
});
const plan = fc.record({
  ours: fc.array(edit, { maxLength: 4 }),
  theirs: fc.array(edit, { maxLength: 4 }),
});
type Plan = typeof plan extends fc.Arbitrary<infer P> ? P : never;

function apply(base: Doc, edits: Plan["ours"], side: string): Doc {
  const out = structuredClone(base);
  for (const e of edits) {
    const element = out.items[e.at % out.items.length];
    if (e.field === "max_files") out.settings.max_files = e.n;
    else if (e.field === "owners") out.settings.owners.push(e.value);
    else if (e.field === "extra") out.extra[`${side}_${e.value}`] = e.n;
    else if (!element) continue;
    else if (e.field === "title") element.title = e.value;
    else if (e.field === "weight") element.weight = e.n;
    else if (e.field === "tags") element.tags.push(e.value);
    else if (e.field === "read") element.limits.read = e.n;
    else if (e.field === "write") element.limits.write = e.n;
    else if (e.field === "delete") out.items.splice(out.items.indexOf(element), 1);
    else if (e.field === "reorder") {
      const { id, title, ...rest } = element;
      out.items[out.items.indexOf(element)] = { id, ...rest, title };
    } else
      out.items.splice(e.at % (out.items.length + 1), 0, {
        ...structuredClone(element),
        id: `${side}${e.n}`,
      });
  }
  return out;
}

const byPath = (cs: DocumentConflict[]) => [...cs].sort((a, b) => (a.path < b.path ? -1 : 1));

describe("the narrowed merge of YAML past the structured bound", () => {
  it("answers as the whole document's merge does, or as the line merge when it gives up", () => {
    let narrowed = 0;
    let conflicting = 0;
    fc.assert(
      fc.property(doc, plan, (d, p) => {
        const [b, o, t] = [d, apply(d, p.ours, "o"), apply(d, p.theirs, "t")].map((x) => stringify(x));
        const [base = "", ours = "", theirs = ""] = [b, o, t];
        const bound = Math.max(base.length, ours.length, theirs.length) - 1;
        const whole = mergeYamlFile(base, ours, theirs);
        const narrow = mergeYamlFile(base, ours, theirs, {}, bound);
        expect(whole?.merged_as).toBe("yaml");
        if (!whole || !narrow) throw new Error("a generated document did not parse");
        const lines = mergeText(base, ours, theirs);
        if ("conflicts" in lines) conflicting++;
        if (narrow.merged_as === "text") {
          expect(narrow).toEqual({ ...lines, merged_as: "text" });
          return;
        }
        narrowed++;
        const reordered = [...p.ours, ...p.theirs].some((e) => e.field === "reorder");
        if ("content" in whole && reordered) {
          // Keys one side only reordered: the whole merge takes either order, the lines keep it.
          expect("content" in narrow && parse(narrow.content)).toEqual(parse(whole.content));
        } else if ("content" in whole) expect(narrow).toEqual(whole);
        else expect("conflicts" in narrow && byPath(narrow.conflicts)).toEqual(byPath(whole.conflicts));
      }),
      { numRuns: 300 },
    );
    // Most line conflicts of these documents are narrowed (a real regression would drop this).
    expect(narrowed).toBeGreaterThan(conflicting * 0.6);
  });
});

describe("a YAML file past the structured bound, through mergeDocument", () => {
  const element = (i: number, title = `Element ${i}`, weight = i) =>
    `  - id: item-${i}\n    title: ${title}\n    weight: ${weight}\n    tags:\n      - alpha\n`;
  const items = (edit: (i: number) => string | undefined = () => undefined) =>
    Array.from({ length: 1_000 }, (_, i) => edit(i) ?? element(i)).join("");
  const file = (head: string, body: string) => `${head}settings:\n  max_files: 1\nitems:\n${body}`;
  const base = file("", items());

  it("merges by structure two edits of neighbouring lines of one element", () => {
    expect(base.length).toBeGreaterThan(MAX_STRUCTURED_YAML_BYTES);
    const ours = base.replace("title: Element 500\n", "title: renamed\n");
    const theirs = base.replace("weight: 500\n", "weight: -1\n");
    expect(mergeText(base, ours, theirs)).toHaveProperty("conflicts");
    expect(mergeDocument("big.yaml", base, ours, theirs)).toEqual({
      content: base.replace("title: Element 500\n    weight: 500\n", "title: renamed\n    weight: -1\n"),
      merged_as: "yaml",
    });
  });

  it("names the path of a real conflict, from the root of the file", () => {
    const ours = base.replace("title: Element 500\n", "title: mine\n");
    const theirs = base.replace("title: Element 500\n", "title: theirs\n");
    expect(mergeDocument("big.yaml", `---\n${base}`, `---\n${ours}`, `---\n${theirs}`)).toEqual({
      conflicts: [{ path: "items[500].title", base: "Element 500", ours: "mine", theirs: "theirs" }],
      merged_as: "yaml",
    });
  });

  it("merges elements both sides added at one place by their identity", () => {
    const ours = base.replace(element(10), `${element(10)}${element(5000)}`);
    const theirs = base.replace(element(10), `${element(10)}${element(6000)}`);
    expect(mergeDocument("big.yaml", base, ours, theirs)).toEqual({
      content: base.replace(element(10), `${element(10)}${element(5000)}${element(6000)}`),
      merged_as: "yaml",
    });
  });

  const byLines = (b: string, o: string, t: string) => ({ ...mergeText(b, o, t), merged_as: "text" });
  const near = (text: string) => text.replace("title: Element 500\n", "title: x\n");
  const nearToo = (text: string) => text.replace("weight: 500\n", "weight: -1\n");

  it.each([
    ["an alias anywhere", `anchor: &a 1\nalias: *a\n`],
    ["a stream of documents", `one: 1\n---\n`],
  ])("answers the line conflict with %s", (_, head) => {
    const [b, o, t] = [file(head, items()), near(file(head, items())), nearToo(file(head, items()))];
    expect(mergeDocument("big.yaml", b, o, t)).toEqual(byLines(b, o, t));
  });

  it("answers the line conflict inside a block scalar, whose lines only look like keys", () => {
    const script = (a: string, b: string) => `script: |\n  a: ${a}\n  b: ${b}\n`;
    const [b, o, t] = [script("1", "2"), script("10", "2"), script("1", "20")].map((h) => file(h, items()));
    expect(mergeDocument("big.yaml", b ?? "", o ?? "", t ?? "")).toMatchObject({ merged_as: "text" });
  });

  it("answers the line conflict when an element moved across the slice", () => {
    // Ours moves element 3 in among the elements both sides added: the slice holds it on one side only.
    const moved = base
      .replace(element(3), "")
      .replace(element(500), `${element(500)}${element(5000)}${element(3)}`);
    const added = base.replace(element(500), `${element(500)}${element(6000)}`);
    expect(mergeDocument("big.yaml", base, moved, added)).toEqual(byLines(base, moved, added));
  });
});
