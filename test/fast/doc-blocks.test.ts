import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CHECKOUT, replaceAll, taggedBlocks } from "../support/doc-blocks.ts";

describe("taggedBlocks: the documented commands a test runs", () => {
  it("takes exactly the lines of blocks tagged test=<name>, whatever else the fence says", () => {
    const page = [
      "Intro, and an untagged block:",
      "```sh",
      "echo not-run",
      "```",
      '```sh title="x" test=one',
      "echo one",
      "",
      "echo still one",
      "```",
      "````md test=two",
      "```sh test=inner",
      "echo inside a longer fence: part of two, not a block of its own",
      "```",
      "````",
      "1. A list item:",
      "   ```sh test=three",
      "   cd /tmp",
      "     echo indented",
      "   ```",
    ].join("\n");
    expect(taggedBlocks(page)).toEqual([
      { name: "one", body: "echo one\n\necho still one\n" },
      {
        name: "two",
        body: "```sh test=inner\necho inside a longer fence: part of two, not a block of its own\n```\n",
      },
      { name: "three", body: "cd /tmp\n  echo indented\n" },
    ]);
  });

  it("refuses a block that never closes, rather than run the rest of the page", () => {
    expect(() => taggedBlocks("```sh test=open\necho a\n")).toThrow(/unclosed/);
  });

  it("replaceAll refuses a mapping whose text the block no longer has", () => {
    expect(replaceAll("curl localhost:8080/x", { "localhost:8080": "127.0.0.1:1" })).toBe(
      "curl 127.0.0.1:1/x",
    );
    expect(() => replaceAll("curl localhost:9090/x", { "localhost:8080": "127.0.0.1:1" })).toThrow(/8080/);
  });
});

describe("tagged blocks in the documentation", () => {
  const pages = ["README.md", ...readdirSync(path.join(CHECKOUT, "docs")).map((f) => `docs/${f}`)].filter(
    (f) => f.endsWith(".md"),
  );
  const testDir = path.join(CHECKOUT, "test/docs");
  // The tests and their support module (test/docs/support.ts reads the registry block for two).
  const tests = readdirSync(testDir)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(path.join(testDir, f), "utf8"))
    .join("\n");

  it("are each run by a test in test/docs/ (a tag no test reads would pretend to be checked)", () => {
    const tags = pages.flatMap((page) =>
      taggedBlocks(readFileSync(path.join(CHECKOUT, page), "utf8")).map((b) => `${page} test=${b.name}`),
    );
    expect(tags.length).toBeGreaterThan(0);
    const unread = tags.filter((tag) => !tests.includes(`"${tag.split(" test=")[1]}"`));
    expect(unread, "tagged blocks no test in test/docs/ names").toEqual([]);
  });

  it("have names unique across the pages", () => {
    const names = pages.flatMap((page) =>
      taggedBlocks(readFileSync(path.join(CHECKOUT, page), "utf8")).map((b) => b.name),
    );
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });
});
