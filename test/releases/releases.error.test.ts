import { beforeAll, describe, expect, it } from "vitest";
import { api, okBody, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import type { Res } from "../support/client.ts";
import { commit, expectError, repoWithOwner, useFixture } from "../support/world.ts";
import { release, releaseState } from "./fixtures.ts";

let seq: number;
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "one" });
  seq = await commit(fx, "main", { "a.md": "two" });
  await release(fx, { name: "existing", sequence: seq, notes: "kept" });
});

async function refused(request: () => Promise<Res>, status: number, code: string): Promise<string> {
  const before = await releaseState(app, fx);
  const msg = expectError(await request(), status, code);
  expect(await releaseState(app, fx)).toEqual(before);
  return msg;
}

describe("creating a release with bad input", () => {
  for (const [label, body, field] of [
    ["no name", { name: undefined }, "body.name"],
    ["an empty name", { name: "" }, "body.name"],
    ["a name of 101 characters", { name: "a".repeat(101) }, "body.name"],
    ["a name starting with '.'", { name: ".v1" }, "body.name"],
    ["a name starting with '-'", { name: "-v1" }, "body.name"],
    ["a name with a space", { name: "v 1" }, "body.name"],
    ["a name with '/'", { name: "release/1" }, "body.name"],
    ["a name with a non-ASCII letter", { name: "vé" }, "body.name"],
    ["no sequence", { sequence: undefined }, "body.sequence"],
    ["a sequence given as a string", { sequence: "1" }, "body.sequence"],
    ["a fractional sequence", { sequence: 1.5 }, "body.sequence"],
    ["sequence 0", { sequence: 0 }, "body.sequence"],
    ["a negative sequence", { sequence: -1 }, "body.sequence"],
    ["notes that are not a string", { notes: 42 }, "body.notes"],
    ["notes of 65537 characters", { notes: "n".repeat(65_537) }, "body.notes"],
  ] as const) {
    it(`refuses ${label} with 400 VALIDATION_FAILED naming ${field}, and writes nothing`, async () => {
      const req = { name: "fresh", sequence: seq, notes: "", ...body };
      const msg = await refused(
        () => unchecked(fx.client).post("/repos/:repo*/-/releases", { params: { repo: fx.repo }, body: req }),
        400,
        "VALIDATION_FAILED",
      );
      expect(msg).toContain(field);
    });
  }

  it("refuses a sequence that is not a commit of the repo with 400 SEQUENCE_OUT_OF_RANGE", async () => {
    const other = await repoWithOwner(app);
    for (let i = 0; i < 5; i++) await commit(other, "main", { "x.md": `${i}` });
    // Sequence 5 exists in the other repo, not in this one (which has 2).
    for (const sequence of [seq + 1, 5, 1_000_000])
      expect(
        await refused(
          () =>
            api(fx.client).post("/repos/:repo*/-/releases", {
              params: { repo: fx.repo },
              body: { name: "beyond", sequence, notes: "" },
            }),
          400,
          "SEQUENCE_OUT_OF_RANGE",
        ),
      ).toContain(String(sequence));
  });

  it("refuses a release on an empty repo (no commits at all)", async () => {
    const empty = await repoWithOwner(app);
    expectError(
      await api(empty.client).post("/repos/:repo*/-/releases", {
        params: { repo: empty.repo },
        body: { name: "v0", sequence: 1, notes: "" },
      }),
      400,
      "SEQUENCE_OUT_OF_RANGE",
    );
    expect(
      okBody(await api(empty.client).get("/repos/:repo*/-/releases", { params: { repo: empty.repo } })),
    ).toEqual({ releases: [] });
  });

  it("refuses malformed JSON with 400 MALFORMED_JSON", async () => {
    await refused(
      () =>
        fx.client.raw("POST", `${fx.base}/releases`, {
          body: '{"name": "x", "sequence": ',
          headers: { "content-type": "application/json" },
        }),
      400,
      "MALFORMED_JSON",
    );
  });
});

describe("a release name is taken once per repo", () => {
  it("refuses a duplicate with 409 RELEASE_EXISTS and keeps the first one as it was", async () => {
    const before = okBody(
      await api(fx.client).get("/repos/:repo*/-/releases/:release_name", {
        params: { repo: fx.repo, release_name: "existing" },
      }),
    );
    await refused(
      () =>
        api(fx.client).post("/repos/:repo*/-/releases", {
          params: { repo: fx.repo },
          body: { name: "existing", sequence: 1, notes: "other" },
        }),
      409,
      "RELEASE_EXISTS",
    );
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "existing" },
        }),
      ),
    ).toEqual(before);
  });

  it("two creates of one name at once: one 201, one 409, one row", async () => {
    const results = await Promise.all(
      ["a", "b"].map((notes) =>
        api(fx.client).post("/repos/:repo*/-/releases", {
          params: { repo: fx.repo },
          body: { name: "raced", sequence: seq, notes },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expectError(results.find((r) => r.status === 409)!, 409, "RELEASE_EXISTS");
    const rows = await app.sql("SELECT notes FROM releases WHERE repo_id = $1 AND name = 'raced'", [
      fx.repoId,
    ]);
    expect(rows).toEqual([{ notes: results.find((r) => r.status === 201)!.body.notes }]);
  });

  it("the same name in another repo is a different release", async () => {
    const other = await repoWithOwner(app);
    const s = await commit(other, "main", { "a.md": "x" });
    expect(await release(other, { name: "existing", sequence: s, notes: "" })).toMatchObject({ sequence: s });
  });
});

describe("reading and deleting releases that are not there", () => {
  it("answers 404 RELEASE_NOT_FOUND for get and delete of an unknown name", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/releases/:release_name", {
        params: { repo: fx.repo, release_name: "ghost" },
      }),
      404,
      "RELEASE_NOT_FOUND",
    );
    await refused(
      () =>
        api(fx.client).delete("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "ghost" },
        }),
      404,
      "RELEASE_NOT_FOUND",
    );
    await refused(
      () =>
        api(fx.client).delete("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "Existing" },
        }),
      404,
      "RELEASE_NOT_FOUND",
    );
  });

  it("a second delete answers 404", async () => {
    await release(fx, { name: "once", sequence: seq, notes: "" });
    expect(
      (
        await api(fx.client).delete("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "once" },
        })
      ).status,
    ).toBe(204);
    await refused(
      () =>
        api(fx.client).delete("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "once" },
        }),
      404,
      "RELEASE_NOT_FOUND",
    );
  });

  it("refuses a malformed name in the path with 400 naming path.release_name", async () => {
    for (const name of ["-x", ".hidden", "a%20b", "a".repeat(101)])
      expect(
        expectError(
          await api(fx.client).get("/repos/:repo*/-/releases/:release_name", {
            params: { repo: fx.repo, release_name: name },
          }),
          400,
          "VALIDATION_FAILED",
        ),
      ).toContain("path.release_name");
    await refused(
      () =>
        api(fx.client).delete("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "-x" },
        }),
      400,
      "VALIDATION_FAILED",
    );
  });

  it("answers 404 REPO_NOT_FOUND for an unknown repo and 405 for PUT", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/releases", { params: { repo: `${fx.org}/nope` } }),
      404,
      "REPO_NOT_FOUND",
    );
    const res = await fx.client.put(`${fx.base}/releases/existing`, { notes: "x" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("DELETE, GET");
  });
});
