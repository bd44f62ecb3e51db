import { describe, expect, it } from "vitest";
import { parseMergeConfig } from "../../../shared/documents/merge/config.ts";
import { mergeDocument } from "../../../shared/documents/merge/index.ts";
import { MAX_STRUCTURED_YAML_BYTES } from "../../../shared/documents/merge/yaml.ts";

const json = (v: unknown, indent: string | number = 2) => `${JSON.stringify(v, null, indent)}\n`;

describe("the JSON rules", () => {
  it("merges arrays of objects by their identity field and keeps tabs", () => {
    const base = json(
      {
        owners: [
          { name: "ann", role: "admin" },
          { name: "bob", role: "writer" },
        ],
      },
      "\t",
    );
    const ours = json(
      {
        owners: [
          { name: "ann", role: "owner" },
          { name: "bob", role: "writer" },
        ],
      },
      "\t",
    );
    const theirs = json(
      { owners: [{ name: "ann", role: "admin" }, { name: "bob", role: "writer" }, { name: "cat" }] },
      "\t",
    );
    expect(mergeDocument("a.json", base, ours, theirs)).toEqual({
      content: json(
        { owners: [{ name: "ann", role: "owner" }, { name: "bob", role: "writer" }, { name: "cat" }] },
        "\t",
      ),
      merged_as: "json",
    });
  });

  it("treats an array without identity as one value: the same change merges, different ones conflict", () => {
    const base = json({ tags: ["a", "b"] });
    expect(
      mergeDocument("a.json", base, json({ tags: ["a", "c"] }), json({ tags: ["a", "c"] })),
    ).toMatchObject({
      content: json({ tags: ["a", "c"] }),
    });
    expect(mergeDocument("a.json", base, json({ tags: ["a", "c"] }), json({ tags: ["b"] }))).toEqual({
      conflicts: [{ path: "tags", base: ["a", "b"], ours: ["a", "c"], theirs: ["b"] }],
      merged_as: "json",
    });
  });

  it("names a conflict inside an element by its index on main, and a deleted side has no field", () => {
    const base = json({
      items: [
        { id: 1, v: 1 },
        { id: 2, v: 2 },
      ],
    });
    const ours = json({ items: [{ id: 2, v: 3 }] });
    const theirs = json({
      items: [
        { id: 1, v: 1 },
        { id: 2, v: 4 },
      ],
    });
    expect(mergeDocument("a.json", base, ours, theirs)).toEqual({
      conflicts: [{ path: "items[0].v", base: 2, ours: 3, theirs: 4 }],
      merged_as: "json",
    });
    const deleted = mergeDocument("a.json", json({ a: 1 }), json({}), json({ a: 2 }));
    expect(deleted).toEqual({ conflicts: [{ path: "a", base: 1, theirs: 2 }], merged_as: "json" });
  });

  it("uses a configured identity field before id, name and key", () => {
    const base = json({ locales: [{ code: "en", name: "English" }] });
    const ours = json({ locales: [{ code: "en", name: "English (US)" }] });
    const theirs = json({
      locales: [
        { code: "en", name: "English" },
        { code: "fr", name: "English" },
      ],
    });
    const merged = mergeDocument("l.json", base, ours, theirs, { merge: "structured", identity: "code" });
    expect(merged).toMatchObject({
      content: json({
        locales: [
          { code: "en", name: "English (US)" },
          { code: "fr", name: "English" },
        ],
      }),
    });
  });

  it("falls back to the line merge when a side does not parse", () => {
    const base = '{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n';
    const broken = '{\n  "a": 10,\n  "b": 2,\n  "c": 3\n}\n//\n';
    expect(mergeDocument("a.json", base, broken, base.replace('"c": 3', '"c": 30'))).toEqual({
      content: '{\n  "a": 10,\n  "b": 2,\n  "c": 30\n}\n//\n',
      merged_as: "text",
    });
  });

  it("keeps a hand-written layout through the line merge when it means the same data", () => {
    const base = '{ "a": 1,\n  "b": 2,\n  "c": 1.0 }\n';
    const merged = mergeDocument(
      "a.json",
      base,
      base.replace('"a": 1', '"a": 5'),
      base.replace("1.0 }", '1.0, "d": 4 }'),
    );
    expect(merged).toEqual({ content: '{ "a": 5,\n  "b": 2,\n  "c": 1.0, "d": 4 }\n', merged_as: "json" });
  });
});

describe("YAML that cannot be read as data", () => {
  it("merges by lines when aliases expand past the limit, instead of failing", () => {
    const laughs = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 8; i++)
      laughs.push(
        `${"abcdefgh"[i]}: &${"abcdefgh"[i]} [${Array(10)
          .fill(`*${"abcdefgh"[i - 1]}`)
          .join(", ")}]`,
      );
    const base = `${laughs.join("\n")}\nend: 1\nmid: 0\nmore: 2\n`;
    const merged = mergeDocument(
      "bomb.yaml",
      base,
      base.replace("end: 1", "end: 10"),
      base.replace("more: 2", "more: 20"),
    );
    expect(merged).toEqual({
      content: base.replace("end: 1", "end: 10").replace("more: 2", "more: 20"),
      merged_as: "text",
    });
  });
});

describe("YAML past the structured bound", () => {
  const settings = (maxFiles: number, owners: string) =>
    `settings:\n  max_files: ${maxFiles}\n  owners: [${owners}]\n`;
  const items = Array.from({ length: 2_000 }, (_, i) => `  - id: item-${i}\n    weight: ${i}\n`).join("");
  const big = (maxFiles: number, owners: string) => `${settings(maxFiles, owners)}items:\n${items}`;

  it("is over MAX_STRUCTURED_YAML_BYTES here, and merges by structure once small", () => {
    expect(big(1, "ann").length).toBeGreaterThan(MAX_STRUCTURED_YAML_BYTES);
    const small = mergeDocument("s.yaml", settings(1, "ann"), settings(2, "ann"), settings(1, "ann, bob"));
    expect(small).toEqual({ content: settings(2, "ann, bob"), merged_as: "yaml" });
  });

  it("merges the lines that conflict by structure, the rest of the file by lines", () => {
    const merged = mergeDocument("big.yaml", big(1, "ann"), big(2, "ann"), big(1, "ann, bob"));
    expect(merged).toEqual({ content: big(2, "ann, bob"), merged_as: "yaml" });
  });

  it("answers the conflict of its lines when the slice around them cannot be merged alone", () => {
    // A flow mapping over two lines: its second line only looks like a key of `settings`.
    const flow = (a: number, b: number) => `settings: {
  a: ${a},
  b: ${b}}
items:
${items}`;
    expect(mergeDocument("big.yaml", flow(1, 2), flow(10, 2), flow(1, 20))).toEqual({
      conflicts: [
        {
          path: "",
          line: 2,
          base: "  a: 1,\n  b: 2}\n",
          ours: "  a: 10,\n  b: 2}\n",
          theirs: "  a: 1,\n  b: 20}\n",
        },
      ],
      merged_as: "text",
    });
  });

  it("takes a clean line merge as it is", () => {
    const theirs = big(1, "ann").replace("weight: 1999\n", "weight: -1\n");
    const merged = mergeDocument("big.yaml", big(1, "ann"), big(2, "ann"), theirs);
    expect(merged).toEqual({
      content: big(2, "ann").replace("weight: 1999\n", "weight: -1\n"),
      merged_as: "text",
    });
  });
});

describe("the text and file rules", () => {
  it("merges by lines under `text`, and conflicts with the lines of each side", () => {
    const base = "a\nb\nc\n";
    expect(mergeDocument("x.json", base, "A\nb\nc\n", "a\nb\nC\n", { merge: "text" })).toEqual({
      content: "A\nb\nC\n",
      merged_as: "text",
    });
    expect(mergeDocument("notes.txt", base, "a\nB1\nc\n", "a\nB2\nc\n")).toEqual({
      conflicts: [{ path: "", line: 2, base: "b\n", ours: "B1\n", theirs: "B2\n" }],
      merged_as: "text",
    });
  });

  it("never merges under `file`, unless both sides made the same change", () => {
    expect(mergeDocument("a.txt", "a\nb\n", "A\nb\n", "a\nB\n", { merge: "file" })).toEqual({
      conflicts: [],
      merged_as: "file",
    });
    expect(mergeDocument("a.txt", "a\n", "b\n", "b\n", { merge: "file" })).toMatchObject({ content: "b\n" });
  });
});

describe(".svc/merge.yaml", () => {
  it("chooses the last matching rule, names without a slash matching in any folder", () => {
    const parsed = parseMergeConfig(
      "default: file\nidentity: slug\nrules:\n  - path: '*.json'\n    merge: structured\n  - path: 'vendor/**'\n    merge: text\n",
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    expect(parsed.config.ruleFor("deep/down/a.json")).toEqual({ merge: "structured", identity: "slug" });
    expect(parsed.config.ruleFor("vendor/x/a.json")).toEqual({ merge: "text", identity: "slug" });
    expect(parsed.config.ruleFor("README.md")).toEqual({ merge: "file", identity: "slug" });
  });

  it("reports every problem with its line and column", () => {
    expect(
      parseMergeConfig("default: sometimes\nrules:\n  - path: ''\n    merge: text\n    glob: x\n"),
    ).toEqual({
      ok: false,
      errors: [
        { message: 'default: Invalid option: expected one of "structured"|"file"', line: 1, column: 10 },
        { message: "rules[0].path: must not be empty", line: 3, column: 11 },
        { message: "rules[0]: unknown key 'glob'", line: 5, column: 5 },
      ],
    });
    expect(parseMergeConfig("rules: [\n")).toMatchObject({ ok: false, errors: [{ line: 2, column: 1 }] });
  });
});
