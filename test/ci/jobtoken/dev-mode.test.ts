import { beforeAll, describe, expect, it } from "vitest";
import type { JobRow } from "../../../shared/ci/jobs/records.ts";
import type { Client } from "../../support/client.ts";
import { errorOf, type RepoFixture, useFixture } from "../../support/world.ts";
import { jobOnFeature, startJobTokenApp } from "./support.ts";

/**
 * Development mode (DEV_IDENTITY) takes every request without a token as the development
 * identity, but a CI job's token still makes the request the job's: a local worker's check runs
 * are reported by `ci-job:<id>` and held to the job's scope, as in production.
 */

const DEV = "dev@example.com";

let fx: RepoFixture;
let job: JobRow;
let jwt: Client;

const app = useFixture(() => startJobTokenApp({ DEV_IDENTITY: DEV }));
beforeAll(async () => {
  ({ fx, job, jwt } = await jobOnFeature(app));
});

describe("a job token in development mode", () => {
  it("reports its check run as the job, not as the development identity", async () => {
    const res = await jwt.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/lint",
      status: "passed",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ reporter: `ci-job:${job.id}` });
  });

  it("is held to the job's scope: a commit with it is refused", async () => {
    const res = await jwt.post(`${fx.base}/commit`, {
      branch: "feature",
      message: "from a step",
      files: [{ path: "docs/c.md", content: Buffer.from("# C\n").toString("base64") }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(errorOf(res).code).toBe("FORBIDDEN");
  });

  it("leaves requests without a token to the development identity", async () => {
    const res = await app.bearer("").get("/me");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ identity: DEV });
  });
});
