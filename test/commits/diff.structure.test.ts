import { beforeAll, describe, expect, it } from "vitest";
import type { DiffResponse } from "../../shared/api/content.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { commit, createBranch, repoWithOwner } from "./fixtures.ts";

/** `GET diff` over real HTTP: the changed places of JSON and YAML files (docs/api.md, "Structured changes"). */

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));

const config = (maxFiles: number, owners: string[]) =>
  `# limits for the repo\nlimits:\n  max_files: ${maxFiles}\nowners:\n${owners.map((o) => `  - name: ${o}\n`).join("")}`;

beforeAll(async () => {
  await commit(fx, "main", {
    "config.yaml": config(10, ["ann", "bob"]),
    "package.json": '{\n  "name": "x",\n  "version": "1.0.0"\n}\n',
    "broken.json": '{"a": 1}\n',
    "notes.md": "hello\n",
    "gone.yml": "a: 1\n",
  });
  await createBranch(fx, "edit");
  await commit(fx, "edit", {
    "config.yaml": config(20, ["ann", "cy", "bob"]),
    "package.json": '{\n  "name": "x",\n  "version": "1.1.0"\n}\n',
    "broken.json": '{"a": \n',
    "notes.md": "hello, world\n",
    "gone.yml": null,
    "new.json": '{"b": [1]}',
  });
});

async function diffOf(branch: string) {
  const res = await api(fx.client).get("/repos/:repo*/-/diff", {
    params: { repo: fx.repo },
    query: { branch },
  });
  expectOk(res, 200);
  const changes = (res.body as DiffResponse).changes;
  return (path: string) => changes.find((c) => c.path === path);
}

describe("a branch's diff of JSON and YAML files", () => {
  it("lists each file's changed places with old and new values, beside its unified diff", async () => {
    const file = await diffOf("edit");
    expect(file("config.yaml")).toMatchObject({
      status: "modified",
      diff: expect.stringContaining("+  max_files: 20"),
      structure: {
        format: "yaml",
        multi_document: false,
        truncated: false,
        paths: [
          { path: "limits.max_files", op: "changed", old: 10, new: 20 },
          { path: 'owners[name="cy"]', op: "added", new: { name: "cy" } },
        ],
      },
    });
    expect(file("package.json")?.structure?.paths).toEqual([
      { path: "version", op: "changed", old: "1.0.0", new: "1.1.0" },
    ]);
  });

  it("names the root of an added or deleted file", async () => {
    const file = await diffOf("edit");
    expect(file("new.json")?.structure?.paths).toEqual([{ path: "", op: "added", new: { b: [1] } }]);
    expect(file("gone.yml")?.structure?.paths).toEqual([{ path: "", op: "removed", old: { a: 1 } }]);
  });

  it("leaves the structure out for other files and for a side that does not parse", async () => {
    const file = await diffOf("edit");
    expect(file("notes.md")).not.toHaveProperty("structure");
    expect(file("broken.json")).not.toHaveProperty("structure");
    expect(file("broken.json")?.diff).toContain('+{"a": ');
  });
});
