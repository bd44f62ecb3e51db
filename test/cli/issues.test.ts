import { describe, expect, it } from "vitest";
import { b64 } from "../support/client.ts";
import { expectExit, useCliRepo } from "./support.ts";

/** `quire issues` as a child process over real HTTP (docs/issues.md). */

const OWNER = "cli-issues@example.com";
const REPO = "cliissues/docs";

const { quire: owner, app } = useCliRepo(OWNER, REPO);

describe("quire issues", { timeout: 60_000 }, () => {
  it("opens, lists, edits, comments, closes, reopens and views by #n", async () => {
    const opened = expectExit(
      await owner([
        "issues",
        "open",
        REPO,
        "-t",
        "Broken link",
        "-b",
        "See *intro*",
        "-l",
        "bug,docs",
        "--json",
      ]),
      0,
    ).json() as { number: number };
    expect(opened).toMatchObject({ number: 1, title: "Broken link", labels: ["bug", "docs"] });

    expect(expectExit(await owner(["issues", "list", REPO]), 0).stdout).toMatch(
      /^1\tBroken link\topen\tbug,docs\t/m,
    );
    expectExit(
      await owner(["issues", "edit", REPO, "1", "-a", "someone@example.com", "-t", "Broken links"]),
      0,
    );
    expectExit(await owner(["issues", "comment", REPO, "1", "-m", "Also on the FAQ"]), 0);
    expect(
      expectExit(await owner(["issues", "close", REPO, "1", "--reason", "duplicate"]), 0).stdout,
    ).toContain("closed issue #1 (duplicate)");
    expect(expectExit(await owner(["issues", "list", REPO, "--json"]), 0).json()).toEqual([]);
    const closed = expectExit(await owner(["issues", "list", REPO, "--state", "closed", "--json"]), 0).json();
    expect(closed).toMatchObject([
      { number: 1, close_reason: "duplicate", assignees: ["someone@example.com"] },
    ]);
    expectExit(await owner(["issues", "reopen", REPO, "1"]), 0);

    const view = expectExit(await owner(["issues", "view", REPO, "1"]), 0).stdout;
    expect(view).toContain("Broken links");
    expect(view).toContain("See *intro*");
    expect(view).toContain(`${OWNER}: Also on the FAQ`);

    expect(expectExit(await owner(["issues", "view", REPO, "2"]), 1).stderr).toContain("ISSUE_NOT_FOUND");
    expect(expectExit(await owner(["issues", "reopen", REPO, "1"]), 1).stderr).toContain("ISSUE_NOT_CLOSED");
  });

  it("links an issue to a commit by hand, and lists a page of 50 unless --limit says otherwise", async () => {
    const api = app().as(OWNER);
    const base = `/repos/${REPO}/-`;
    const made = await api.post(`${base}/commit`, {
      branch: "main",
      message: "a fix that names no issue",
      files: [{ path: "fix.md", content: b64("fixed") }],
    });
    expect(made.status).toBe(201);
    const sequence = (made.body as { sequence: number }).sequence;
    expect(
      expectExit(await owner(["issues", "link", REPO, "1", "--commit", String(sequence)]), 0).stdout,
    ).toContain(`linked issue #1 to commit ${sequence}`);
    const refs = await api.get(`${base}/issues/1/refs`);
    expect((refs.body as { commits: { sequence: number }[] }).commits.map((c) => c.sequence)).toEqual([
      sequence,
    ]);
    expect(expectExit(await owner(["issues", "link", REPO, "1"]), 2).stderr).toContain(
      "--commit <sequence> or --proposal <id>",
    );

    for (let i = 0; i < 51; i++)
      expect((await api.post(`${base}/issues`, { title: `more ${i}` })).status).toBe(201);
    expect((expectExit(await owner(["issues", "list", REPO, "--json"]), 0).json() as unknown[]).length).toBe(
      50,
    );
    const all = expectExit(await owner(["issues", "list", REPO, "--limit", "100", "--json"]), 0).json();
    expect((all as unknown[]).length).toBe(52);
  });
});
