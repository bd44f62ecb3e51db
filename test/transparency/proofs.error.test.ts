import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { expectError, useFixture, world } from "../support/world.ts";

const app = useFixture(startTestApp);
const fx = useFixture(async () => {
  const repo = await world(app).repo({ people: { reader: "reader" } });
  await repo.commit("main", { "a.md": "a" });
  await repo.commit("main", { "a.md": "b" });
  return repo;
});

const nodes = () => app.sql("SELECT count(*)::int AS n FROM tlog_nodes WHERE repo_id = $1", [fx.repoId]);

describe("proofs refuse what the log cannot prove", () => {
  it("refuses a sequence beyond the size, and a size beyond the log", async () => {
    const before = await nodes();
    for (const q of ["sequence=3&size=2", "sequence=1&size=3", "sequence=0&size=2", "sequence=1&size=0"]) {
      const res = await fx.client.get(`${fx.base}/proof/inclusion?${q}`);
      expectError(res, 400, ["SEQUENCE_OUT_OF_RANGE", "VALIDATION_FAILED"]);
    }
    expect(await nodes()).toEqual(before);
  });

  it("refuses a consistency proof backwards or beyond the log", async () => {
    for (const q of ["from=2&to=1", "from=1&to=3", "from=0&to=2"]) {
      const res = await fx.client.get(`${fx.base}/proof/consistency?${q}`);
      expectError(res, 400, ["SEQUENCE_OUT_OF_RANGE", "VALIDATION_FAILED"]);
    }
  });

  it("names the log's size when a proof reaches beyond it", async () => {
    const res = await fx.client.get(`${fx.base}/proof/consistency?from=1&to=9`);
    expect(expectError(res, 400, "SEQUENCE_OUT_OF_RANGE")).toBe("to 9 is beyond the log's size 2");
  });

  it("requires both parameters, as whole numbers", async () => {
    expectError(await fx.client.get(`${fx.base}/proof/inclusion?sequence=1`), 400, "VALIDATION_FAILED");
    expectError(await fx.client.get(`${fx.base}/proof/consistency?from=x&to=2`), 400, "VALIDATION_FAILED");
  });

  it("answers a repo the caller may not read as not found, with no checkpoint", async () => {
    const stranger = app.as("stranger@example.com");
    expectError(await stranger.get(`${fx.base}/checkpoint`), 404, "REPO_NOT_FOUND");
    expect((await fx.as("reader").get(`${fx.base}/checkpoint`)).status).toBe(200);
  });
});
