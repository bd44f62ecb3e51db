import { readFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, installPolicies, type RepoHandle, useFixture, world } from "../support/world.ts";
import { merge, statusOf } from "./fixtures.ts";

/**
 * The policy input's `structure` and the shipped release_fields policy
 * (docs/policies/release_fields.rego), over real HTTP with the real opa: only `version` and
 * `changelog` may change without a maintainer's approval of the head.
 */

const app = useFixture(startTestApp);
const shipped = readFile(new URL("../../docs/policies/release_fields.rego", import.meta.url), "utf8");

/** Passes always and reports `input.structure` as its reason, so a test can read the input. */
const ECHO_STRUCTURE = `package quire.policy.echo_structure

allow := true

reason := json.marshal(input.structure)
`;

const PACKAGE = '{\n  "name": "widget",\n  "version": "1.0.0",\n  "changelog": ["1.0.0: first"]\n}\n';
const CONFIG = "# release notes live here too\nchangelog:\n  latest: 1.0.0\nlimits:\n  max_files: 10\n";

describe("changed places in merge policies", { timeout: 90_000 }, () => {
  let repo: RepoHandle<"lead" | "dev">;

  beforeAll(async () => {
    repo = await world(app).repo({ people: { lead: "maintainer", dev: "writer" } });
    await repo.commit("main", { "package.json": PACKAGE, "config.yaml": CONFIG, "README.md": "widget\n" });
    // Installed as the docs say: the maintainers' emails in `maintainers`.
    const policy = (await shipped).replace('"lead@example.com"', JSON.stringify(repo.people.lead));
    await installPolicies(repo, { release_fields: policy, echo_structure: ECHO_STRUCTURE });
  });

  const releasePolicy = async (branch: string) =>
    (await statusOf(repo, branch)).policies.find((p) => p.name === "release_fields");

  it("gives each changed JSON and YAML file's places to the policies", async () => {
    await repo.branch("bump", {
      files: {
        "package.json": PACKAGE.replace('"1.0.0",', '"1.1.0",').replace(
          'first"]',
          'first", "1.1.0: faster"]',
        ),
        "config.yaml": CONFIG.replace("latest: 1.0.0", "latest: 1.1.0"),
      },
    });
    const status = await statusOf(repo, "bump");
    const echoed = status.policies.find((p) => p.name === "echo_structure")?.reason ?? "";
    expect(JSON.parse(echoed)).toEqual({
      "config.yaml": {
        format: "yaml",
        multi_document: false,
        truncated: false,
        paths: [{ path: "changelog.latest", op: "changed", old: "1.0.0", new: "1.1.0" }],
      },
      "package.json": {
        format: "json",
        multi_document: false,
        truncated: false,
        paths: [
          { path: "version", op: "changed", old: "1.0.0", new: "1.1.0" },
          { path: "changelog[1]", op: "added", new: "1.1.0: faster" },
        ],
      },
    });
    expect(await releasePolicy("bump")).toEqual({
      name: "release_fields",
      pass: true,
      reason: "only version and changelog changed",
    });
    expect((await merge(repo, "bump")).status).toBe(200);
  });

  it("asks a maintainer to approve any other place, and any file without a structure", async () => {
    await repo.branch("rename", {
      files: {
        "package.json": PACKAGE.replace('"widget"', '"gadget"').replace('"1.0.0",', '"1.2.0",'),
        "README.md": "gadget\n",
        "config.yaml": "limits: [\n",
      },
    });
    expect(await releasePolicy("rename")).toEqual({
      name: "release_fields",
      pass: false,
      reason: "needs a maintainer's approval at the head: README.md, config.yaml, package.json: name",
    });
    expectError(await merge(repo, "rename"), 403, "POLICY_DENIED");

    const approve = (who: "lead" | "dev") =>
      api(repo.as(who)).post("/repos/:repo*/-/review", {
        params: { repo: repo.repo },
        body: { branch: "rename", status: "approved", body: "ok" },
      });
    // A writer's approval is not a maintainer's.
    expect((await approve("dev")).status).toBe(201);
    expect(await releasePolicy("rename")).toMatchObject({ pass: false });
    expect((await approve("lead")).status).toBe(201);
    expect(await releasePolicy("rename")).toEqual({
      name: "release_fields",
      pass: true,
      reason: "approved by a maintainer",
    });
  });
});
