import { describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import {
  commit,
  createBranch,
  errorOf,
  expectError,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../support/world.ts";
import { expectMerged, merge, rebase, statusOf } from "./fixtures.ts";

const app = useFixture(startTestApp);

/** The text of `path` on `branch`. */
async function text(fx: RepoFixture, path: string, branch = "main") {
  const file = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
    params: { repo: fx.repo, path },
    query: { branch },
  });
  return Buffer.from(okBody(file).content, "base64").toString();
}

const eventTypes = async (repo: string) =>
  (
    await app.sql<{ type: string }>("SELECT type FROM events WHERE repo = $1 ORDER BY txid, position", [repo])
  ).map((r) => r.type);

const CONFIG_YAML = `# Limits of the service
limits:
  max_files: 100 # per commit
  max_size: 10

owners:
  - name: ann
    role: admin
  - name: bob
    role: writer
`;

const PACKAGE_JSON = `{
  "name": "demo",
  "version": "1.0.0",
  "dependencies": {
    "left-pad": "^1.3.0"
  }
}
`;

describe("structured merge through the API", () => {
  it("merges two people's edits to different keys of one YAML file, keeping its comments, as an ordinary merge", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "config.yaml": CONFIG_YAML });
    await createBranch(fx, "owners");
    await commit(fx, "owners", {
      "config.yaml": CONFIG_YAML.replace(
        "    role: writer\n",
        "    role: writer\n  - name: cat\n    role: reader\n",
      ),
    });
    await commit(fx, "main", { "config.yaml": CONFIG_YAML.replace("max_files: 100", "max_files: 200") });
    const before = await eventTypes(fx.repo);
    const merged = await expectMerged(fx, "owners");
    expect(await text(fx, "config.yaml")).toBe(
      CONFIG_YAML.replace("max_files: 100", "max_files: 200").replace(
        "    role: writer\n",
        "    role: writer\n  - name: cat\n    role: reader\n",
      ),
    );
    expect((await eventTypes(fx.repo)).slice(before.length)).toEqual([
      "com.svc.commit.created",
      "com.svc.branch.merged",
    ]);
    expect(merged.sequence).toBeGreaterThan(0);
  });

  it("merges edits to different keys of a JSON file in the file's own style", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "package.json": PACKAGE_JSON });
    await createBranch(fx, "deps");
    await commit(fx, "deps", {
      "package.json": PACKAGE_JSON.replace('"^1.3.0"', '"^1.3.0",\n    "zod": "^4.0.0"'),
    });
    await commit(fx, "main", {
      "package.json": PACKAGE_JSON.replace('"version": "1.0.0"', '"version": "1.1.0"'),
    });
    expect((await statusOf(fx, "deps")).conflicts).toEqual([]);
    await expectMerged(fx, "deps");
    expect(JSON.parse(await text(fx, "package.json"))).toEqual({
      name: "demo",
      version: "1.1.0",
      dependencies: { "left-pad": "^1.3.0", zod: "^4.0.0" },
    });
    expect(await text(fx, "package.json")).toMatch(/^\{\n {2}"name": "demo",\n[\s\S]*\n\}\n$/);
  });

  it("merges different paragraphs of one Markdown file", async () => {
    const fx = await repoWithOwner(app);
    const doc = "# Guide\n\nFirst paragraph.\n\nSecond paragraph.\n\nThird paragraph.\n";
    await commit(fx, "main", { "guide.md": doc });
    await createBranch(fx, "words");
    await commit(fx, "words", { "guide.md": doc.replace("Third paragraph.", "Third paragraph, reworded.") });
    await commit(fx, "main", { "guide.md": doc.replace("First paragraph.", "First paragraph, clearer.") });
    await expectMerged(fx, "words");
    expect(await text(fx, "guide.md")).toBe(
      "# Guide\n\nFirst paragraph, clearer.\n\nSecond paragraph.\n\nThird paragraph, reworded.\n",
    );
  });

  it("answers a real conflict with 409 naming the file and the path, with base, ours and theirs, changing nothing", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "config.yaml": CONFIG_YAML });
    await createBranch(fx, "raise");
    await commit(fx, "raise", { "config.yaml": CONFIG_YAML.replace("max_files: 100", "max_files: 500") });
    await commit(fx, "main", { "config.yaml": CONFIG_YAML.replace("max_files: 100", "max_files: 200") });
    const before = await snapshot(app, fx);
    const res = await merge(fx, "raise");
    expectError(res, 409, "MERGE_CONFLICT");
    expect(errorOf(res).conflicts).toEqual([
      {
        path: "config.yaml",
        main_version_id: expect.any(String),
        branch_version_id: expect.any(String),
        merge: "yaml",
        paths: [{ path: "limits.max_files", base: 100, ours: 200, theirs: 500 }],
      },
    ]);
    expect(await snapshot(app, fx)).toEqual(before);
    expect((await statusOf(fx, "raise")).mergeable).toBe(false);
  });

  it("rebases a branch over main's edit of another key, the replayed head holding both", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "package.json": PACKAGE_JSON });
    await createBranch(fx, "name");
    await commit(fx, "name", { "package.json": PACKAGE_JSON.replace('"demo"', '"demo-one"') });
    await commit(fx, "name", { "package.json": PACKAGE_JSON.replace('"demo"', '"demo-two"') });
    await commit(fx, "main", { "package.json": PACKAGE_JSON.replace('"1.0.0"', '"2.0.0"') });
    expect(okBody(await rebase(fx, "name")).commits_replayed).toBe(2);
    const head = JSON.parse(await text(fx, "package.json", "name"));
    expect([head.name, head.version]).toEqual(["demo-two", "2.0.0"]);
    await expectMerged(fx, "name");
    expect(JSON.parse(await text(fx, "package.json"))).toMatchObject({ name: "demo-two", version: "2.0.0" });
  });

  it("follows .svc/merge.yaml at the base: a `file` rule keeps whole-file conflicts", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { ".svc/merge.yaml": "rules:\n  - path: '*.lock.json'\n    merge: file\n" });
    await commit(fx, "main", { "deps.lock.json": PACKAGE_JSON, "other.json": PACKAGE_JSON });
    await createBranch(fx, "both");
    const edit = (s: string) => s.replace('"demo"', '"branch"');
    await commit(fx, "both", { "deps.lock.json": edit(PACKAGE_JSON), "other.json": edit(PACKAGE_JSON) });
    const main = (s: string) => s.replace('"1.0.0"', '"1.0.1"');
    await commit(fx, "main", { "deps.lock.json": main(PACKAGE_JSON), "other.json": main(PACKAGE_JSON) });
    const res = await merge(fx, "both");
    expectError(res, 409, "MERGE_CONFLICT");
    expect(errorOf(res).conflicts).toEqual([
      expect.objectContaining({ path: "deps.lock.json", merge: "file", paths: [] }),
    ]);
  });

  it("reports an invalid .svc/merge.yaml with line and column, its conflicts staying whole files", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", {
      ".svc/merge.yaml": "default: structured\nrules:\n  - path: '*.json'\n    mode: file\n",
    });
    await commit(fx, "main", { "a.json": PACKAGE_JSON });
    await createBranch(fx, "b");
    await commit(fx, "b", { "a.json": PACKAGE_JSON.replace('"demo"', '"b"') });
    await commit(fx, "main", { "a.json": PACKAGE_JSON.replace('"1.0.0"', '"3.0.0"') });
    const res = await merge(fx, "b");
    // expectError allows only `conflicts`: `merge_config_errors` is there only when the file is invalid.
    expect([res.status, errorOf(res).code]).toEqual([409, "MERGE_CONFLICT"]);
    const body = errorOf(res) as unknown as { merge_config_errors: unknown[]; conflicts: unknown[] };
    expect(body.conflicts).toEqual([expect.objectContaining({ path: "a.json", merge: "file" })]);
    expect(body.merge_config_errors).toEqual(
      expect.arrayContaining([
        {
          message: 'rules[0].merge: Invalid option: expected one of "structured"|"text"|"file"',
          line: 3,
          column: 5,
        },
        { message: "rules[0]: unknown key 'mode'", line: 4, column: 5 },
      ]),
    );
  });
});
