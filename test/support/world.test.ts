import { describe, expect, it } from "vitest";
import { api, okBody } from "./api.ts";
import { startTestApp } from "./app.ts";
import { expectError, useFixture, world } from "./world.ts";

/** The world builder sets up what it says, as the API shows it. */

const app = useFixture(startTestApp);

describe("world(app)", () => {
  it("builds a repo whose people hold their roles and whose owner is admin", async () => {
    const repo = await world(app).repo({ people: { writer: "writer", reader: "reader" } });
    const roles = await repo.client.get(`${repo.base}/roles`);
    expect(roles.status).toBe(200);
    expect(JSON.stringify(roles.body)).toContain(repo.people.writer);
    expect((await repo.as("reader").get(`/repos/${repo.repo}`)).status).toBe(200);
    const denied = await repo.as("reader").post(`${repo.base}/branch`, { name: "x" });
    expectError(denied, 403, "FORBIDDEN");
    expectError(await app.as(`stranger@${repo.org}.test`).get(`/repos/${repo.repo}`), 404, "REPO_NOT_FOUND");
  });

  it("builds a branch with files and commits on it as a person", async () => {
    const repo = await world(app).repo({ people: { writer: "writer" } });
    const feature = await repo.branch("feature", { files: { "a.md": "one" } });
    const head = await repo.commit(feature.name, { "a.md": "two" }, "edit", repo.as("writer"));
    expect(head).toBeGreaterThan(feature.head);
    const file = okBody(
      await api(repo.client).get("/repos/:repo*/-/file/:path*", {
        params: { repo: repo.repo, path: "a.md" },
        query: { branch: "feature" },
      }),
    );
    expect(Buffer.from(file.content, "base64").toString()).toBe("two");
  });

  it("adds org members and claims a CI job on a branch", async () => {
    const org = await world(app).org({ members: ["m@example.com"] });
    const members = await org.client.get(`/orgs/${org.name}/members`);
    expect(JSON.stringify(members.body)).toContain("m@example.com");
    const repo = await org.repo();
    await repo.branch("ci", { files: { "a.md": "x" } });
    const { job, requestToken } = await repo.job("ci");
    expect(job.id).toEqual(expect.any(String));
    expect(requestToken.length).toBeGreaterThan(0);
  });
});

describe("useFixture", () => {
  it("forwards to the started value, methods bound to it", async () => {
    const { as } = app;
    expect((await as("someone@example.com").get("/orgs")).status).toBe(200);
    expect(Object.keys({ ...app })).toContain("url");
  });
});
