import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  diffDocuments,
  MAX_DOCUMENT_CHARS,
  MAX_PATHS,
  MAX_VALUE_CHARS,
  structureBudget,
} from "../../shared/documents/changes.ts";

/** The paths of a diff as `op path`, the shortest way to say what it found. */
const ops = (d: ReturnType<typeof diffDocuments>) => d?.paths.map((p) => `${p.op} ${p.path}`);

describe("diffDocuments: which files", () => {
  it("reads .json, .yaml and .yml in any case, and nothing else", () => {
    expect(diffDocuments("a/B.JSON", "{}", '{"a":1}')?.format).toBe("json");
    expect(diffDocuments("c.yaml", "a: 1", "a: 2")?.format).toBe("yaml");
    expect(diffDocuments("c.YML", "a: 1", "a: 2")?.format).toBe("yaml");
    expect(diffDocuments("notes.md", "a: 1", "a: 2")).toBeNull();
    expect(diffDocuments("json", "{}", '{"a":1}')).toBeNull();
  });

  it("gives nothing when a side that exists does not parse: the text diff stays alone", () => {
    expect(diffDocuments("a.json", '{"a":', '{"a":1}')).toBeNull();
    expect(diffDocuments("a.json", '{"a":1}', "{'a':1}")).toBeNull();
    expect(diffDocuments("a.yaml", "a: [", "a: 1")).toBeNull();
    expect(diffDocuments("a.yaml", "a: 1\na: 2\n", "a: 1")).toBeNull();
    expect(diffDocuments("a.json", null, "nope")).toBeNull();
  });

  it("gives nothing for a YAML mapping that repeats a key, as the string toJS makes of it", () => {
    expect(diffDocuments("a.yaml", "a: 1\n", "a: 1\nb: {c: 1, c: 2}\n")).toBeNull();
    expect(diffDocuments("a.yaml", "a: 1\n", "1: x\n'1': y\n")).toBeNull();
  });

  it(`gives nothing for a side longer than ${MAX_DOCUMENT_CHARS} characters`, () => {
    const big = JSON.stringify({ a: "x".repeat(MAX_DOCUMENT_CHARS) });
    expect(diffDocuments("a.json", "{}", big)).toBeNull();
    expect(
      diffDocuments("a.json", "{}", JSON.stringify({ a: "x".repeat(MAX_DOCUMENT_CHARS - 20) })),
    ).not.toBeNull();
  });

  it("names the root for an added or deleted file", () => {
    expect(diffDocuments("a.json", null, '{"a":1}')?.paths).toEqual([
      { path: "", op: "added", new: { a: 1 } },
    ]);
    expect(diffDocuments("a.yaml", "a: 1\n", null)?.paths).toEqual([
      { path: "", op: "removed", old: { a: 1 } },
    ]);
  });
});

describe("diffDocuments: the deepest changed place", () => {
  it("names a changed scalar, an added key and a removed key by their path", () => {
    const d = diffDocuments(
      "config.json",
      '{"limits":{"max_files":10,"max_size":5},"name":"x"}',
      '{"limits":{"max_files":20,"max_size":5},"name":"x","owners":["a@x.io"]}',
    );
    expect(d).toEqual({
      format: "json",
      multi_document: false,
      truncated: false,
      paths: [
        { path: "limits.max_files", op: "changed", old: 10, new: 20 },
        { path: "owners", op: "added", new: ["a@x.io"] },
      ],
    });
    expect(diffDocuments("c.yaml", "a:\n  b: 1\n  c: 2\n", "a:\n  b: 1\n")?.paths).toEqual([
      { path: "a.c", op: "removed", old: 2 },
    ]);
  });

  it("quotes keys that are not identifiers, as formatPath does", () => {
    const d = diffDocuments("o.json", '{"paths":{"/x":{"get":1}}}', '{"paths":{"/x":{"get":2}}}');
    expect(ops(d)).toEqual(['changed paths["/x"].get']);
  });

  it("takes a change of kind or type as one change of the value", () => {
    expect(diffDocuments("a.json", '{"a":{"b":1}}', '{"a":[1]}')?.paths).toEqual([
      { path: "a", op: "changed", old: { b: 1 }, new: [1] },
    ]);
    expect(ops(diffDocuments("a.json", '{"a":"1"}', '{"a":1}'))).toEqual(["changed a"]);
    expect(ops(diffDocuments("a.json", '{"a":null}', '{"a":false}'))).toEqual(["changed a"]);
  });

  it("sees no change in formatting, comments or key order", () => {
    expect(diffDocuments("a.json", '{"a":1,"b":[1,2]}', '{\n  "b": [1, 2],\n  "a": 1.0\n}\n')?.paths).toEqual(
      [],
    );
    expect(diffDocuments("a.yaml", "# one\na: 1 # x\nb: &v 2\nc: *v\n", "b: 2\na: 1\nc: 2\n")?.paths).toEqual(
      [],
    );
  });
});

describe("diffDocuments: arrays", () => {
  it("compares elements by index, then lists what one side has beyond the other", () => {
    expect(ops(diffDocuments("a.json", '{"x":[1,2,3]}', '{"x":[1,5]}'))).toEqual([
      "changed x[1]",
      "removed x[2]",
    ]);
    expect(diffDocuments("a.json", "[1]", "[1,{}]")?.paths).toEqual([{ path: "[1]", op: "added", new: {} }]);
    expect(ops(diffDocuments("a.json", '{"x":[{"a":1}]}', '{"x":[{"a":2}]}'))).toEqual(["changed x[0].a"]);
  });

  it("matches objects by id, name or key when every element carries a distinct one", () => {
    const before = {
      owners: [
        { name: "ann", role: "r" },
        { name: "bob", role: "r" },
      ],
    };
    const after = {
      owners: [
        { name: "ann", role: "w" },
        { name: "cy", role: "r" },
        { name: "bob", role: "r" },
      ],
    };
    expect(diffDocuments("o.json", JSON.stringify(before), JSON.stringify(after))?.paths).toEqual([
      { path: 'owners[name="ann"].role', op: "changed", old: "r", new: "w" },
      { path: 'owners[name="cy"]', op: "added", new: { name: "cy", role: "r" } },
    ]);
    const byId = diffDocuments("i.yaml", "- id: 1\n  v: a\n- id: 2\n  v: b\n", "- id: 2\n  v: c\n");
    expect(ops(byId)).toEqual(["removed [id=1]", "changed [id=2].v"]);
    // id comes first: both carry it, so `name` (which changes) is a field of the element.
    expect(ops(diffDocuments("k.json", '[{"id":"a","name":"x"}]', '[{"id":"a","name":"y"}]'))).toEqual([
      'changed [id="a"].name',
    ]);
  });

  it("falls back to indices when an element lacks the field or two share it", () => {
    expect(ops(diffDocuments("a.json", '[{"id":1},{"v":2}]', '[{"id":1},{"v":3}]'))).toEqual([
      "changed [1].v",
    ]);
    expect(ops(diffDocuments("a.json", '[{"id":1},{"id":1}]', '[{"id":1},{"id":2}]'))).toEqual([
      "changed [1].id",
    ]);
    expect(ops(diffDocuments("a.json", '[{"id":{"x":1}}]', '[{"id":{"x":2}}]'))).toEqual([
      "changed [0].id.x",
    ]);
  });

  it("takes a reordered array of identified elements as one changed value, never as no change", () => {
    const d = diffDocuments(
      "s.json",
      '{"steps":[{"name":"a"},{"name":"b"}]}',
      '{"steps":[{"name":"b"},{"name":"a"}]}',
    );
    expect(ops(d)).toEqual(["changed steps"]);
  });
});

describe("diffDocuments: YAML streams", () => {
  it("puts the document's index first when either side holds more than one", () => {
    const d = diffDocuments("k.yaml", "kind: A\n---\nkind: B\n", "kind: A\n---\nkind: C\n---\nkind: D\n");
    expect(d?.multi_document).toBe(true);
    expect(d?.paths).toEqual([
      { path: "[1].kind", op: "changed", old: "B", new: "C" },
      { path: "[2]", op: "added", new: { kind: "D" } },
    ]);
    expect(ops(diffDocuments("k.yaml", "a: 1\n---\nb: 1\n", "a: 1\n"))).toEqual(["removed [1]"]);
    expect(diffDocuments("k.yaml", "a: 1\n", "a: 2\n")?.multi_document).toBe(false);
  });

  it("takes an empty stream as one null document", () => {
    expect(diffDocuments("e.yaml", "", "a: 1\n")?.paths).toEqual([
      { path: "", op: "changed", old: null, new: { a: 1 } },
    ]);
  });
});

describe("diffDocuments: caps", () => {
  it(`lists at most ${MAX_PATHS} places and says when there were more`, () => {
    const many = (v: number) =>
      JSON.stringify(Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`k${i}`, v])));
    const d = diffDocuments("big.json", many(1), many(2));
    expect(d?.paths).toHaveLength(MAX_PATHS);
    expect(d?.truncated).toBe(true);
    expect(d?.paths[0]).toEqual({ path: "k0", op: "changed", old: 1, new: 2 });
    expect(diffDocuments("big.json", many(1), many(1))?.truncated).toBe(false);
  });

  it(`leaves out a value longer than ${MAX_VALUE_CHARS} characters of JSON, and says so`, () => {
    const long = "x".repeat(MAX_VALUE_CHARS);
    const d = diffDocuments("v.json", JSON.stringify({ a: "short" }), JSON.stringify({ a: long }));
    expect(d?.paths).toEqual([{ path: "a", op: "changed", old: "short", values_omitted: true }]);
    const fits = "y".repeat(MAX_VALUE_CHARS - 2);
    expect(diffDocuments("v.json", "{}", JSON.stringify({ a: fits }))?.paths).toEqual([
      { path: "a", op: "added", new: fits },
    ]);
  });
});

describe("diffDocuments: properties", () => {
  const json = fc.jsonValue({ maxDepth: 3 });

  it("finds no change exactly when the two documents are equal", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const d = diffDocuments("p.json", JSON.stringify(a), JSON.stringify(b));
        const equal = JSON.stringify(a) === JSON.stringify(b);
        if (equal) expect(d?.paths).toEqual([]);
        // Key order is no change, so unequal texts may still be equal documents; their diff is not empty
        // unless they differ only in the order of keys.
        if ((d?.paths.length ?? 0) === 0) expect(sorted(a)).toEqual(sorted(b));
      }),
    );
  });

  it("names every place once, and each place it names exists on the side its op says", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const d = diffDocuments("p.json", JSON.stringify(a), JSON.stringify(b));
        const paths = d?.paths.map((p) => p.path) ?? [];
        expect(new Set(paths).size).toBe(paths.length);
        for (const p of d?.paths ?? []) {
          // A value longer than MAX_VALUE_CHARS is left out, and the place says so.
          if (p.op !== "added") expect("old" in p || p.values_omitted === true).toBe(true);
          if (p.op !== "removed") expect("new" in p || p.values_omitted === true).toBe(true);
        }
      }),
    );
  });
});

/** A JSON value with its object keys sorted, to compare documents regardless of key order. */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (typeof v === "object" && v !== null)
    return Object.fromEntries(
      Object.entries(v)
        .sort(([x], [y]) => (x < y ? -1 : 1))
        .map(([k, w]) => [k, sorted(w)]),
    );
  return v;
}

describe("structureBudget", () => {
  it("diffs files while their texts fit the allowance, then gives nothing", () => {
    const structureOf = structureBudget(20);
    expect(structureOf("a.md", "0123456789", "0123456789")).toBeNull();
    // A file that is not JSON or YAML spends nothing.
    expect(structureOf("a.json", '{"a":1}', '{"a":2}')?.paths).toHaveLength(1);
    expect(structureOf("b.json", '{"a":1}', '{"a":2}')).toBeNull();
    expect(structureOf("c.json", null, "{}")?.paths).toHaveLength(1);
  });
});
