import { closeSync, openSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { expectExit, useCliRepo } from "./support.ts";

/** `quire secrets` as a child process over real HTTP: the value from standard input only. */

const OWNER = "cli-secrets@example.com";
const REPO = "clisecrets/docs";
const VALUE = "line one\nline two ünïcode";

const { quire: owner, homeDir } = useCliRepo(OWNER, REPO);

/** `quire secrets set` with `input` as its standard input. */
async function setFrom(input: string, args: string[]) {
  const file = path.join(homeDir(), "value.txt");
  await writeFile(file, input);
  const fd = openSync(file, "r");
  try {
    return await owner(["secrets", "set", REPO, ...args], { inherit: { 0: fd } });
  } finally {
    closeSync(fd);
  }
}

describe("quire secrets", { timeout: 60_000 }, () => {
  it("sets from stdin, lists without values, deletes; refuses a value anywhere but stdin", async () => {
    const set = expectExit(
      await setFrom(VALUE, ["DEPLOY_KEY", "-", "--description", "the site", "--json"]),
      0,
    );
    expect(set.json()).toMatchObject({ name: "DEPLOY_KEY", size_bytes: Buffer.byteLength(VALUE) });
    expect(set.stdout).not.toContain("line one");

    const listed = expectExit(await owner(["secrets", "list", REPO]), 0);
    expect(listed.stdout).toMatch(/DEPLOY_KEY\tthe site\t\d+\tcli-secrets@example.com/);
    expect(listed.stdout).not.toContain("line one");

    const asArgument = expectExit(await setFrom("", ["OTHER", "the-value-itself"]), 2);
    expect(asArgument.stderr).toContain("read from standard input only");
    expect(expectExit(await setFrom("", ["OTHER", "-"]), 2).stderr).toContain("empty");
    const badName = expectExit(await setFrom("v", ["lower", "-"]), 1);
    expect(badName.stderr).toContain("VALIDATION_FAILED");

    expectExit(await owner(["secrets", "delete", REPO, "DEPLOY_KEY"]), 0);
    expect(expectExit(await owner(["secrets", "list", REPO, "--json"]), 0).json()).toEqual([]);
    expect(expectExit(await owner(["secrets", "rm", REPO, "DEPLOY_KEY"]), 1).stderr).toContain(
      "SECRET_NOT_FOUND",
    );
  });
});
