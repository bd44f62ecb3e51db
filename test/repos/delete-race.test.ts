import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { b64, type Res } from "../support/client.ts";
import { type RepoHandle, useFixture, world } from "../support/world.ts";

/**
 * Deleting a repo while writers work in it (issue 17): whatever the interleaving, the delete
 * answers 204 and every writer either succeeds or, once the repo is gone, gets 404
 * REPO_NOT_FOUND. Never a 500 (a deadlock, a foreign key violation) and never another 404
 * (BRANCH_NOT_FOUND for a branch that went with its repo).
 */

const app = useFixture(startTestApp);

const ROUNDS = 8;
/** At most this many requests per writer and round; each stops at its first 404 (the delete comes after ten have landed). */
const STEPS = 60;
const BUDGET_MS = 15_000;

type Outcome = { op: string; status: number; code?: string };
type Step = (fx: RepoHandle, n: number) => Promise<Res>;

const post = (fx: RepoHandle, path: string, body: object) => fx.client.post(`${fx.base}/${path}`, body);

const commitOn =
  (branch: string, tag: string): Step =>
  (fx, n) =>
    post(fx, "commit", {
      branch,
      message: `${tag} ${n}`,
      files: [{ path: `${tag}/${n}.md`, content: b64(`${tag}${n}`) }],
    });

/** Sixteen writers of seven kinds, each on paths of its own so that nothing conflicts. */
function writers(): [string, Step][] {
  return [
    ["commit main a", commitOn("main", "ma")],
    ["commit main b", commitOn("main", "mb")],
    ["commit c0", commitOn("c0", "c0")],
    ["commit c1", commitOn("c1", "c1")],
    ["commit c2", commitOn("c2", "c2")],
    ["commit c3", commitOn("c3", "c3")],
    ["branch create a", (fx, n) => post(fx, "branch", { name: `na-${n}` })],
    ["branch create b", (fx, n) => post(fx, "branch", { name: `nb-${n}` })],
    ["merge r0", (fx, n) => (n === 0 ? post(fx, "merge", { branch: "r0" }) : commitOn("main", "mr0")(fx, n))],
    ["merge r1", (fx, n) => (n === 0 ? post(fx, "merge", { branch: "r1" }) : commitOn("main", "mr1")(fx, n))],
    ["review c0", (fx, n) => post(fx, "review", { branch: "c0", status: "rejected", body: `no ${n}` })],
    ["review c1", (fx, n) => post(fx, "review", { branch: "c1", status: "rejected", body: `no ${n}` })],
    ["rebase c2", (fx) => post(fx, "rebase", { branch: "c2" })],
    ["rebase c3", (fx) => post(fx, "rebase", { branch: "c3" })],
    ["comment c1", (fx, n) => post(fx, "comment", { branch: "c1", path: "c1/seed.md", body: `why ${n}` })],
    ["purge", (fx) => post(fx, "purge", { older_than: "1s" })],
  ];
}

/** Runs `step` STEPS times, or until the repo is gone. */
async function writer(fx: RepoHandle, op: string, step: Step, landed: () => void): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let n = 0; n < STEPS; n++) {
    const res = await step(fx, n);
    const code = (res.body as { code?: string } | undefined)?.code;
    outcomes.push(code === undefined ? { op, status: res.status } : { op, status: res.status, code });
    if (res.status === 404) break;
    landed();
  }
  return outcomes;
}

async function round(): Promise<{ outcomes: Outcome[]; deleted: Res }> {
  const fx = await world(app).repo();
  for (const b of ["c0", "c1", "c2", "c3", "r0", "r1"])
    await fx.branch(b, { files: { [`${b}/seed.md`]: b } });
  let landedCount = 0;
  let release: () => void = () => {};
  const enough = new Promise<void>((resolve) => (release = resolve));
  const landed = () => {
    if (++landedCount === 10) release();
  };
  const all = Promise.all(writers().map(([op, step]) => writer(fx, op, step, landed)));
  await Promise.race([enough, all]);
  const deleted = await fx.client.delete(`/repos/${fx.repo}`);
  return { outcomes: (await all).flat(), deleted };
}

describe("deleting a repo while writers work in it", () => {
  it("answers 204, and every writer succeeds or gets 404 REPO_NOT_FOUND", { timeout: 60_000 }, async () => {
    const started = Date.now();
    const unexpected: string[] = [];
    const deletes: number[] = [];
    let losers = 0;
    for (let r = 0; r < ROUNDS && Date.now() - started < BUDGET_MS; r++) {
      const { outcomes, deleted } = await round();
      deletes.push(deleted.status);
      for (const o of outcomes) {
        if (o.status === 404 && o.code === "REPO_NOT_FOUND") losers++;
        else if (o.status >= 300) unexpected.push(`round ${r}: ${o.op} ${o.status} ${o.code ?? ""}`);
      }
    }
    expect(unexpected).toEqual([]);
    expect(
      deletes.every((s) => s === 204),
      `deletes: ${deletes}`,
    ).toBe(true);
    // Every writer of every round ends on the deleted repo, so the race was run.
    expect(losers).toBe(deletes.length * writers().length);
  });
});
