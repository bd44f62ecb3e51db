import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { enqueueJob } from "../../shared/ci/jobs/queue.ts";
import { ciYaml, claimWithin, startCiApp } from "../ci/support.ts";
import type { Client } from "../support/client.ts";
import { type RepoHandle, useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

/**
 * CI in the browser (docs/web.md, "CI"). No worker runs: the test plays its part over the real
 * protocol (claim, log upload with the request token, check reports, complete), so the pages are
 * seen in every state a run passes through, and the run page is watched updating live.
 */

const app = useFixture(() => startCiApp());
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

const FAILING = "test/unit";
const PASSING = "lint/style";
/** A log of 5,000 numbered lines (120,000 bytes), long enough for two windows of 64 KiB. */
const LONG_LOG = Array.from(
  { length: 5000 },
  (_, i) => `line ${String(i).padStart(4, "0")} \x1b[32mok\x1b[0m   \n`,
).join("");

async function report(repo: RepoHandle<string>, check: string, status: string, logUrl?: string) {
  const body = { branch: "main", check_name: check, status, ...(logUrl ? { log_url: logUrl } : {}) };
  const res = await repo.client.post(`${repo.base}/check`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

async function uploadLog(
  worker: Client,
  repo: RepoHandle<string>,
  check: string,
  text: string,
  partial = false,
) {
  const res = await worker.raw("POST", `${repo.base}/check/${check}/logs${partial ? "?partial=true" : ""}`, {
    body: text,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return (res.body as { url: string }).url;
}

/** A run queued straight into the queue (no worker takes it), `at` ms since the epoch. */
async function queueRun(
  repo: RepoHandle<string>,
  branchId: number,
  sequence: number,
  type: "push" | "schedule",
  at: number,
) {
  await enqueueJob(app.server.ctx.pool, {
    repoId: repo.repoId,
    branchId,
    sequence,
    triggerType: type,
    triggerBranch: "main",
    triggerBaseBranch: null,
    triggerProposalId: null,
    triggerKey: null,
    checks: [PASSING],
    createdBy: "ci-scheduler",
    now: new Date(at),
  });
}

async function fitsNarrowScreen(page: Page, name: string) {
  await page.setViewportSize({ width: 390, height: 800 });
  expect(Number(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(390);
  await screenshot(page, `${name}-390`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

describe("CI in the browser", () => {
  it("starts a manual run from the button, shows it live with coloured and paged logs, lists it and its check's history", async () => {
    const repo = await world(app).repo({ people: { writer: "writer", reader: "reader" } });
    // Pushes trigger nothing here: the only runs are the ones the test starts.
    const sequence = await repo.commit("main", {
      ".svc/ci.yaml": ciYaml([PASSING, FAILING], "on:\n  push:\n    branches: [nothing]\n"),
    });
    const page = await pageAs(repo.people.writer);
    const errors = watchErrors(page);

    // A branch that does not exist: refused with what was typed kept, nothing queued.
    await page.goto(`/ui/repos/${repo.repo}/-/ci`);
    await page.getByLabel("Branch").fill("no-such-branch");
    await page.getByRole("button", { name: "Run CI" }).click();
    await expect(page.locator("#form-refused").textContent()).resolves.toContain("no-such-branch");
    await expect(page.locator("#kept").textContent()).resolves.toContain("no-such-branch");
    errors.splice(0); // the refusal's own 404

    await page.goto(`/ui/repos/${repo.repo}/-/ci`);
    await page.getByRole("button", { name: "Run CI" }).click();
    await page.waitForURL(/\/-\/ci\/[0-9a-f-]{36}$/);
    const runId = new URL(page.url()).pathname.split("/").at(-1) ?? "";
    await expect(page.locator("#run-status").textContent()).resolves.toContain("queued");

    // The worker's part: claim, then both checks start (pending).
    const claim = await claimWithin(app);
    expect(claim.body.id).toBe(runId);
    const worker = app.bearer(claim.body.request_token);
    await report(repo, PASSING, "pending");
    await report(repo, FAILING, "pending");
    await page.reload();
    await expect(page.locator("#run-status").textContent()).resolves.toContain("running");
    await expect(page.locator(`[data-check="${FAILING}"]`).textContent()).resolves.toContain(
      "output shows here as the worker sends it",
    );

    // The failing check's log streams while it runs: the script appends what the worker sends,
    // whole lines only, with no reload (the marker set on the window stays).
    await page.locator("main[data-live-state=open]").waitFor();
    await page.evaluate("window.notReloaded = true");
    const failing = page.locator(`[data-check="${FAILING}"] pre.log`);
    const soFar = "step one\n\x1b[33mwarming up\x1b[0m\npart";
    await uploadLog(worker, repo, FAILING, soFar, true);
    await page.locator(`[data-check="${FAILING}"] pre.log span.ansi-fg-3`).waitFor();
    expect(await failing.textContent()).toBe("step one\nwarming up\n");
    const more = `${soFar}ial line done\n\nline three\n`;
    await uploadLog(worker, repo, FAILING, more, true);
    await page.locator(`[data-check="${FAILING}"] pre.log`, { hasText: "line three" }).waitFor();
    expect(await failing.textContent()).toBe("step one\nwarming up\npartial line done\n\nline three\n");
    expect(await page.evaluate("window.notReloaded")).toBe(true);
    await screenshot(page, "ci-run-streaming");

    // The failing check ends while the page is open: its whole log replaces the stream.
    const failLog = `${more}\x1b[1;31mFAIL\x1b[0m expected 1 to be 2\n<script>alert(1)</script>\n`;
    await report(repo, FAILING, "failed", await uploadLog(worker, repo, FAILING, failLog));
    const red = page.locator(`[data-check="${FAILING}"] pre.log span.ansi-fg-1.ansi-bold`);
    await red.waitFor();
    await expect(red.textContent()).resolves.toBe("FAIL");
    expect(await page.locator(`[data-check="${FAILING}"] pre.log[data-log-tail]`).count()).toBe(0);
    expect(await page.evaluate("window.notReloaded")).toBe(true);

    await report(repo, PASSING, "passed", await uploadLog(worker, repo, PASSING, LONG_LOG));
    const done = await worker.post(`/jobs/${runId}/complete`, {
      status: "failed",
      error: "1 of 2 checks failed",
    });
    expect(done.status).toBe(200);
    await page.reload();
    await expect(page.locator("#run-status").textContent()).resolves.toContain("failed");
    const html = await page.content();
    expect(html).not.toContain("\x1b");
    expect(html).not.toContain("[31m");
    expect(await page.locator("pre.log script").count()).toBe(0);
    await expect(page.locator(`[data-check="${FAILING}"] pre.log`).textContent()).resolves.toContain(
      "<script>alert(1)</script>",
    );

    // The long log: its tail on the run page, the earlier window on a page of its own, tiling it.
    const tail = (await page.locator(`[data-check="${PASSING}"] pre.log`).textContent()) ?? "";
    expect(tail).toContain("line 4999 ok");
    expect(tail).not.toContain("line 0000");
    const firstOfTail = Number(/^line (\d{4})/.exec(tail)?.[1]);
    expect(await page.locator(`[data-check="${PASSING}"] pre.log span.ansi-fg-2`).first().textContent()).toBe(
      "ok",
    );
    await screenshot(page, "ci-run");
    await fitsNarrowScreen(page, "ci-run");

    await page.locator(`[data-check="${PASSING}"] a.earlier`).click();
    const earlier = (await page.locator("pre.log").textContent()) ?? "";
    expect(earlier.trimEnd().endsWith(`line ${String(firstOfTail - 1).padStart(4, "0")} ok`)).toBe(true);
    expect(earlier).not.toContain("line 0000");
    const firstOfEarlier = Number(/^line (\d{4})/.exec(earlier)?.[1]);
    await page.locator("a.earlier").click();
    const first = (await page.locator("pre.log").textContent()) ?? "";
    expect(first.startsWith("line 0000 ok")).toBe(true);
    expect(first.trimEnd().endsWith(`line ${String(firstOfEarlier - 1).padStart(4, "0")} ok`)).toBe(true);
    expect(await page.locator("a.earlier").count()).toBe(0);
    await expect(page.locator("a.later").count()).resolves.toBe(1);
    const raw = await page.request.get((await page.locator("a.raw").getAttribute("href")) ?? "");
    expect(raw.headers()["content-type"]).toBe("text/plain; charset=utf-8");
    expect(await raw.text()).toBe(LONG_LOG);

    // The runs list: a push run queued since comes first; the manual run with every field.
    const ctx = app.server.ctx;
    const [row] = await app.sql<{ id: number }>(
      "SELECT id FROM branches WHERE repo_id = $1 AND name = 'main'",
      [repo.repoId],
    );
    await queueRun(repo, row?.id ?? 0, sequence, "push", ctx.clock.now().getTime() + 1000);
    await page.goto(`/ui/repos/${repo.repo}/-/ci`);
    await expect(page.locator('nav.repo a[aria-current="page"]').textContent()).resolves.toBe("CI");
    const rows = page.locator("table.runs tbody tr");
    await expect(rows.count()).resolves.toBe(2);
    const pushed = (await rows.nth(0).textContent()) ?? "";
    expect(pushed).toContain("queued");
    expect(pushed).toContain(`${repo.owner} (push)`);
    const manual = rows.nth(1);
    const cells = await manual.locator("td").allTextContents();
    expect(cells[0]).toBe(runId.slice(0, 8));
    expect(cells[1]).toContain("failed");
    expect(cells[2]).toBe("manual");
    expect(cells[3]).toBe("main");
    expect(cells[4]).toBe(String(sequence));
    expect(cells[5]).toContain(repo.people.writer);
    expect(await manual.locator("td time[datetime]").count()).toBe(1);
    expect(cells[7]).toMatch(/^\d+s$/);
    expect(await manual.locator(`a[href$="/-/commit/${sequence}"]`).count()).toBe(1);
    await screenshot(page, "ci-runs");
    await fitsNarrowScreen(page, "ci-runs");

    // The failing check's history on main: this sequence, failed, linked to the run.
    await page.goto(`/ui/repos/${repo.repo}/-/ci/${runId}`);
    await page.getByRole("link", { name: `History of ${FAILING} on main` }).click();
    const history = page.locator("table.check-history tbody tr");
    await expect(history.count()).resolves.toBe(1);
    const cellsOfHistory = await history.locator("td").allTextContents();
    expect(cellsOfHistory[0]).toBe(String(sequence));
    expect(cellsOfHistory[1]).toContain("failed");
    expect(await history.locator(`a[href$="/-/ci/${runId}"]`).count()).toBe(1);
    await screenshot(page, "ci-check-history");
    expect(errors).toEqual([]);

    // A reader sees the runs but is offered no button.
    const reader = await pageAs(repo.people.reader);
    await reader.goto(`/ui/repos/${repo.repo}/-/ci`);
    await expect(reader.locator("table.runs tbody tr").count()).resolves.toBe(2);
    await expect(reader.getByRole("button", { name: "Run CI" }).count()).resolves.toBe(0);
    const refused = await reader.request.post(`/ui/repos/${repo.repo}/-/ci`, {
      form: { branch: "main" },
      headers: { accept: "text/html", origin: app.url },
    });
    expect(refused.status()).toBe(403);

    // Thirty scheduled runs more: the newest 30 on the first page, the two oldest on the next.
    for (let i = 2; i <= 31; i++)
      await queueRun(repo, row?.id ?? 0, sequence, "schedule", ctx.clock.now().getTime() + i * 1000);
    await reader.reload();
    await expect(reader.locator("table.runs tbody tr").count()).resolves.toBe(30);
    await expect(reader.locator("table.runs tbody tr").first().textContent()).resolves.toContain(
      "the schedule",
    );
    await reader.getByRole("link", { name: "Older runs" }).click();
    const older = reader.locator("table.runs tbody tr");
    await expect(older.count()).resolves.toBe(2);
    await expect(older.nth(1).locator("td").first().textContent()).resolves.toBe(runId.slice(0, 8));
    await expect(reader.getByRole("link", { name: "Older runs" }).count()).resolves.toBe(0);
  });
});
