import { beforeAll, describe, expect, it } from "vitest";
import {
  branch,
  commitAs,
  eventData,
  markMerged,
  type Team,
  TIMESTAMP,
  team,
  UUID,
} from "../reviews/fixtures.ts";
import { api, type Options, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, expectStatus, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

type CheckStatus = "pending" | "passed" | "failed";

const report = (t: Team, who: string, body: Options<"POST", "/repos/:repo*/-/check">["body"]) =>
  api(t.as(who)).post("/repos/:repo*/-/check", { params: { repo: t.repo }, body });

describe("reporting a check run", () => {
  it("records it at the branch head by default: 201 with the check run record", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const head = await commitAs(t, t.writer, "feat");
    const res = await report(t, t.writer2, {
      branch: "feat",
      check_name: "ci/lint",
      status: "passed",
      log_url: "https://ci.example.com/runs/1/log",
    });
    expectOk(res, 201);
    expect(Object.keys(res.body).sort()).toEqual([
      "branch",
      "check_name",
      "created_at",
      "id",
      "log_url",
      "reporter",
      "sequence",
      "status",
      "updated_at",
    ]);
    expect(res.body).toMatchObject({
      branch: "feat",
      check_name: "ci/lint",
      status: "passed",
      log_url: "https://ci.example.com/runs/1/log",
      sequence: head,
      reporter: t.writer2,
    });
    expect(res.body.id).toMatch(UUID);
    expect(res.body.created_at).toMatch(TIMESTAMP);
    expect(res.body.updated_at).toBe(res.body.created_at);
  });

  it("records com.svc.check.reported once, with exactly the spec's fields", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const head = await commitAs(t, t.writer, "feat");
    expect(
      (await report(t, t.writer, { branch: "feat", check_name: "build", status: "pending" })).status,
    ).toBe(201);
    expect(await eventData(t, "com.svc.check.reported")).toEqual([
      {
        repo: t.repo,
        branch: "feat",
        sequence: head,
        check_name: "build",
        status: "pending",
        reporter: t.writer,
      },
    ]);
  });

  it("without log_url (or with null) stores none", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    const a = await report(t, t.writer, { branch: "feat", check_name: "a", status: "failed" });
    const b = await report(t, t.writer, { branch: "feat", check_name: "b", status: "failed", log_url: null });
    expect([a.body.log_url, b.body.log_url]).toEqual([null, null]);
  });

  it("accepts an explicit sequence from 1 up to the head: main's below the base and the branch's own", async () => {
    const t = await team(app);
    const m1 = await commitAs(t, t.owner, "main");
    await branch(t, "feat");
    const f1 = await commitAs(t, t.writer, "feat");
    const f2 = await commitAs(t, t.writer, "feat", "b.md");
    for (const sequence of [m1, f1, f2]) {
      const res = await report(t, t.writer, {
        branch: "feat",
        check_name: "ci/test",
        status: "passed",
        sequence,
      });
      expectOk(res, 201);
      expect(res.body.sequence).toBe(sequence);
    }
    const list = await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
      params: { repo: t.repo, branch: "feat" },
    });
    expectOk(list, 200);
    expect(list.body.check_runs.map((c) => c.sequence)).toEqual([m1, f1, f2]);
  });

  it("accepts check runs on main", async () => {
    const t = await team(app);
    const head = await commitAs(t, t.owner, "main");
    const res = await report(t, t.writer, { branch: "main", check_name: "ci/test", status: "passed" });
    expectOk(res, 201);
    expect(res.body).toMatchObject({ branch: "main", sequence: head });
  });

  it("accepts check runs on a draft branch", async () => {
    const t = await team(app);
    await branch(t, "wip", true);
    await commitAs(t, t.writer, "wip");
    expect((await report(t, t.writer, { branch: "wip", check_name: "x", status: "pending" })).status).toBe(
      201,
    );
  });

  for (const name of ["lint", "ci/lint", "org.ci/unit_tests-2", "a/b/c/d", "A.B", "x".repeat(200)])
    it(`accepts the check name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}…(${name.length})` : name)}`, async () => {
      const t = await team(app);
      await commitAs(t, t.owner, "main");
      const res = await report(t, t.writer, { branch: "main", check_name: name, status: "passed" });
      expectOk(res, 201);
      expect(res.body.check_name).toBe(name);
    });
});

describe("a later report of the same check at the same sequence", () => {
  it("replaces the earlier one (still 201): one run, same id and created_at, new status, log_url and reporter", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const head = await commitAs(t, t.writer, "feat");
    const first = await report(t, t.writer, {
      branch: "feat",
      check_name: "ci/test",
      status: "pending",
      log_url: "https://ci.example.com/1",
    });
    expectOk(first, 201);
    const second = await report(t, t.writer2, { branch: "feat", check_name: "ci/test", status: "passed" });
    expectOk(second, 201);
    expect(second.body).toMatchObject({
      id: first.body.id,
      created_at: first.body.created_at,
      status: "passed",
      log_url: null,
      reporter: t.writer2,
      sequence: head,
    });
    expect(Date.parse(second.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(first.body.updated_at));
    const list = await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
      params: { repo: t.repo, branch: "feat" },
    });
    expectOk(list, 200);
    expect(list.body.check_runs).toEqual([second.body]);
    const rows = await app.sql("SELECT count(*)::int AS n FROM check_runs WHERE repo_id = $1", [t.repoId]);
    expect(rows[0]!["n"]).toBe(1);
    expect((await eventData(t, "com.svc.check.reported")).map((e) => [e["status"], e["reporter"]])).toEqual([
      ["pending", t.writer],
      ["passed", t.writer2],
    ]);
  });

  it("replaces only that (branch, sequence, check name): other sequences, names and branches are kept", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await branch(t, "other");
    const s1 = await commitAs(t, t.writer, "feat");
    const o1 = await commitAs(t, t.writer, "other");
    const s2 = await commitAs(t, t.writer, "feat", "b.md");
    const post = (b: string, check_name: string, status: CheckStatus, sequence?: number) =>
      report(t, t.writer, { branch: b, check_name, status, ...(sequence ? { sequence } : {}) });
    expect((await post("feat", "ci/test", "failed", s1)).status).toBe(201);
    expect((await post("feat", "ci/test", "pending", s2)).status).toBe(201);
    expect((await post("feat", "ci/lint", "passed", s2)).status).toBe(201);
    expect((await post("other", "ci/test", "passed", o1)).status).toBe(201);
    expect((await post("feat", "ci/test", "passed", s2)).status).toBe(201);
    const list = await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
      params: { repo: t.repo, branch: "feat" },
    });
    expectOk(list, 200);
    expect(list.body.check_runs.map((c) => [c.sequence, c.check_name, c.status])).toEqual([
      [s1, "ci/test", "failed"],
      [s2, "ci/lint", "passed"],
      [s2, "ci/test", "passed"],
    ]);
    const other = await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
      params: { repo: t.repo, branch: "other" },
    });
    expectOk(other, 200);
    expect(other.body.check_runs.map((c) => [c.sequence, c.check_name, c.status])).toEqual([
      [o1, "ci/test", "passed"],
    ]);
  });

  it("racing reports of one check end as exactly one run", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    const results = await Promise.all(
      (["pending", "passed", "failed", "passed", "pending", "failed"] as const).map((status) =>
        report(t, t.writer, { branch: "feat", check_name: "race", status }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
          params: { repo: t.repo, branch: "feat" },
        }),
      ).check_runs,
    ).toHaveLength(1);
    expect(await eventData(t, "com.svc.check.reported")).toHaveLength(6);
  });
});

describe("listing check runs", () => {
  let t: Team;
  let m1: number;
  let s1: number;
  let s2: number;
  beforeAll(async () => {
    t = await team(app);
    m1 = await commitAs(t, t.owner, "main");
    await branch(t, "feat");
    s1 = await commitAs(t, t.writer, "feat");
    s2 = await commitAs(t, t.writer, "feat", "b.md");
    for (const [check_name, sequence] of [
      ["zeta", s2],
      ["alpha", s2],
      ["ci/b", s1],
      ["ci/a", s1],
      ["base", m1],
    ] as const)
      expect(
        (await report(t, t.writer, { branch: "feat", check_name, status: "passed", sequence })).status,
      ).toBe(201);
  });

  it("returns {check_runs: [...]} by sequence, then check name", async () => {
    const res = await api(t.as(t.reader)).get("/repos/:repo*/-/branch/:branch*/checks", {
      params: { repo: t.repo, branch: "feat" },
    });
    expectOk(res, 200);
    expect(Object.keys(res.body)).toEqual(["check_runs"]);
    expect(res.body.check_runs.map((c) => [c.sequence, c.check_name])).toEqual([
      [m1, "base"],
      [s1, "ci/a"],
      [s1, "ci/b"],
      [s2, "alpha"],
      [s2, "zeta"],
    ]);
  });

  it("with at, returns only check runs at or before that sequence", async () => {
    const names = async (at: number) =>
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
          params: { repo: t.repo, branch: "feat" },
          query: { at: String(at) },
        }),
      ).check_runs.map((c) => c.check_name);
    expect(await names(s1)).toEqual(["base", "ci/a", "ci/b"]);
    expect(await names(m1)).toEqual(["base"]);
    expect(await names(0)).toEqual([]);
    expect(await names(s2)).toHaveLength(5);
  });

  it("returns an empty list for a branch without check runs", async () => {
    await branch(t, "quiet");
    expect(
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
          params: { repo: t.repo, branch: "quiet" },
        }),
      ),
    ).toEqual({ check_runs: [] });
  });

  it("still lists the check runs of a merged branch", async () => {
    const u = await team(app);
    await branch(u, "done");
    await commitAs(u, u.writer, "done");
    expect((await report(u, u.writer, { branch: "done", check_name: "x", status: "passed" })).status).toBe(
      201,
    );
    await markMerged(u, "done");
    expect(
      okBody(
        await api(u.client).get("/repos/:repo*/-/branch/:branch*/checks", {
          params: { repo: u.repo, branch: "done" },
        }),
      ).check_runs,
    ).toHaveLength(1);
  });

  it("works for branch names with slashes", async () => {
    const u = await team(app);
    await branch(u, "feature/x");
    await commitAs(u, u.writer, "feature/x");
    expect(
      (await report(u, u.writer, { branch: "feature/x", check_name: "x", status: "passed" })).status,
    ).toBe(201);
    for (const seg of ["feature/x", "feature%2Fx"])
      expect(
        (
          expectStatus(await u.client.get(`${u.base}/branch/${seg}/checks`), 200) as {
            check_runs: { branch: string }[];
          }
        ).check_runs[0]?.branch,
      ).toBe("feature/x");
  });
});
