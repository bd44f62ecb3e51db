import { spawn } from "node:child_process";
import { appendFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  CHECKOUT,
  docBlock,
  replaceAll,
  runShell,
  type ShellResult,
  stopGroup,
} from "../support/doc-blocks.ts";
import { freePort } from "../support/ports.ts";
import { screenshot, useBrowser, watchErrors } from "../web/browser.ts";
import { startDocRegistry, startDocServer } from "./support.ts";

/**
 * docs/first-hour.md, played from start to end as a newcomer would: every block of the page in
 * order, as written, with free ports for 8080 and 5000. The `quire` commands run on a real
 * terminal (`script`), so what is checked is what a person reads there; the refusals the page
 * meets on purpose are checked for their hints. The server is `npm start` on a fresh database of
 * the test cluster (DATABASE_URL set) rather than embedded PostgreSQL, which takes a minute to
 * initialise; `npm run install-cli` installs into a scratch prefix instead of npm's global one.
 */

const PAGE = "docs/first-hour.md";
/** What terminal 3 showed, block by block: the test's artifact, to read the hour as a person did. */
const TRANSCRIPT = path.resolve("test-results/first-hour.txt");
const CI_PAGE = "docs/ci-worker.md";

let scratch = "";
let quire = "";
let registry = "";
let home = "";
const stops: (() => Promise<void>)[] = [];
const chromium = useBrowser();

beforeAll(async () => {
  await mkdir(path.dirname(TRANSCRIPT), { recursive: true });
  await writeFile(TRANSCRIPT, "");
  scratch = await mkdtemp(path.join(tmpdir(), "quire-first-hour-"));
  home = path.join(scratch, "home");
  await mkdir(home);
  quire = `127.0.0.1:${await freePort()}`;
  registry = `127.0.0.1:${await freePort()}`;
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  // A child killed by a timed-out test can still be writing its tsx cache here for a moment.
  await rm(scratch, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
});

/** The page's fixed addresses, mapped to this test's; only those a block names. */
function ports(script: string): string {
  const map: Record<string, string> = {};
  if (script.includes("127.0.0.1:8080")) map["127.0.0.1:8080"] = quire;
  if (script.includes("127.0.0.1:5000")) map["127.0.0.1:5000"] = registry;
  return replaceAll(script, map);
}

/** A terminal's environment: a home of its own, the scratch npm prefix on PATH, no stored sign-in. */
function terminalEnv(): Record<string, string | undefined> {
  const prefix = path.join(scratch, "prefix");
  return {
    HOME: home,
    npm_config_prefix: prefix,
    PATH: `${path.join(prefix, "bin")}:${process.env["PATH"]}`,
    XDG_CONFIG_HOME: path.join(scratch, "config"),
    TMPDIR: scratch,
    npm_config_offline: "true",
    NO_UPDATE_NOTIFIER: "1",
    QUIRE_TOKEN: undefined,
    QUIRE_AS: undefined,
    BROWSER: undefined,
    DISPLAY: undefined,
    TERM: "xterm-256color",
    COLUMNS: "160",
  };
}

/** Terminal 3's state after `export QUIRE_SERVER=…` in the install block. */
const withServer = () => ({ ...terminalEnv(), QUIRE_SERVER: `http://${quire}` });

/** What a person reads: the terminal's bytes without colour and carriage returns. */
const screen = (text: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what is stripped
  text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "");

/**
 * Runs a block on a real terminal: bash under `script`, stopping at the first failing command as
 * `runShell` does. Resolves with its exit code and the terminal's output (stdout and stderr, as
 * they appeared). `onOutput` sees the output as it comes.
 */
function onTty(
  block: string,
  cwd: string,
  env: Record<string, string | undefined>,
  onOutput?: (all: string) => void,
): { done: Promise<ShellResult>; stop(): void } {
  const file = path.join(scratch, `block-${Math.random().toString(36).slice(2)}.sh`);
  const written = writeFile(file, block);
  let output = "";
  let stopChild = () => {};
  const done = written.then(
    () =>
      new Promise<ShellResult>((resolve, reject) => {
        const merged = { ...process.env, ...env };
        for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
        const child = spawn(
          "script",
          ["-qec", `stty cols 160 2>/dev/null; bash -e -o pipefail ${file}`, "/dev/null"],
          {
            cwd,
            env: merged,
            stdio: ["ignore", "pipe", "pipe"],
            detached: true,
          },
        );
        stopChild = () => stopGroup(child, "SIGKILL");
        const timer = setTimeout(stopChild, 60_000);
        const take = (d: Buffer) => {
          output += d.toString();
          onOutput?.(screen(output));
        };
        child.stdout.on("data", take);
        child.stderr.on("data", take);
        child.on("error", reject);
        child.on("close", (code) => {
          clearTimeout(timer);
          resolve({ code, output: screen(output) });
        });
      }),
  );
  return { done, stop: () => stopChild() };
}

/** Runs `name` of the page on terminal 3 in `cwd` and expects exit `code`; answers its output. */
async function step(
  name: string,
  cwd: string,
  code: number,
  env: Record<string, string | undefined> = withServer(),
): Promise<string> {
  const block = ports(docBlock(PAGE, name));
  const r = await onTty(block, cwd, env).done;
  await transcribe(name, block, r);
  expect(r.code, `${name}:\n${r.output}`).toBe(code);
  return r.output;
}

async function transcribe(name: string, block: string, r: ShellResult): Promise<void> {
  const typed = block.replace(/^/gm, "$ ").trimEnd();
  await appendFile(TRANSCRIPT, `## ${name} (exit ${r.code})\n${typed}\n${r.output}\n`);
}

it("plays the first hour as docs/first-hour.md tells it, on a terminal, ending in the browser", async () => {
  const copy = path.join(home, "docs");

  // 1. Terminal 1: the server.
  const server = await startDocServer(ports(docBlock(PAGE, "first-hour/server")), quire, scratch);
  stops.push(server.stop);

  // 2. Terminal 2: the registry (docs/ci-worker.md's block); terminal 3: the CLI, then the image.
  const registryShell = await startDocRegistry(registry);
  stops.push(registryShell.stop);
  const install = await step("first-hour/install", CHECKOUT, 0, terminalEnv());
  expect(install).toMatch(/alice@example\.com/);
  expect(install).toMatch(/every request is alice@example\.com.*no sign-in is needed/);
  expect(install, "how to be bob, the second identity").toMatch(/quire --as <email>/);
  const build = await runShell(ports(docBlock(CI_PAGE, "ci-image/build")), { env: terminalEnv() });
  expect(build.code, build.output).toBe(0);

  // 3. An org, a repo, bob as a writer, a clone.
  await step("first-hour/repo", CHECKOUT, 0);

  // 4. The rules and the guide on main; then a commit of nothing, refused with its hint.
  const first = await step("first-hour/first-commit", copy, 0);
  expect(first).toMatch(/guide\.md/);
  expect(first).toMatch(/reviewed_and_tested\.rego/);
  const nothing = await step("first-hour/nothing-to-commit", copy, 1);
  expect(nothing).toMatch(/nothing to commit: no local changes/);
  expect(nothing).toMatch(/edit, add or delete files first/);

  // 5. A branch, an edit, a proposal; not mergeable yet, and the dry run says why.
  const propose = await step("first-hour/propose", copy, 0);
  expect(propose).toMatch(/\+Quire keeps documents, with review and CI\./);
  expect(propose).toMatch(/Introduce Quire/);
  const notYet = await step("first-hour/not-yet", copy, 1);
  expect(notYet).toMatch(/a merge now would be refused/);
  expect(notYet).toMatch(/needs an approval and a passed check/);

  // 6. Self-approval refused, pointing at another writer; bob approves.
  const self = await step("first-hour/self-approve", copy, 1);
  expect(self).toMatch(/ask another writer of the repo to review it/);
  expect(self, "the way to be that writer on a development server").toMatch(
    /quire --as <email> reviews approve/,
  );
  const review = await step("first-hour/review", copy, 0);
  expect(review).toMatch(/bob@example\.com/);
  expect(review).toMatch(/approved/);
  // A table with relative times, as a terminal gets it (a pipe gets tab-separated ISO times).
  expect(review).toMatch(/REVIEWER.*\n.*approved\s+bob@example\.com.*just now/);

  // 7. CI: the run waits, says how to start a worker, and ends once terminal 4's worker ran it.
  let saw = "";
  const ciRun = onTty(ports(docBlock(PAGE, "first-hour/ci-run")), copy, withServer(), (all) => {
    saw = all;
  });
  stops.push(async () => ciRun.stop());
  for (let i = 0; i < 200 && !/npm run worker/.test(saw); i++) await new Promise((r) => setTimeout(r, 100));
  expect(saw, "the hint to start a worker").toMatch(/SVC_CI_WORKER_TOKEN=… npm run worker/);
  const worker = await runShell(ports(docBlock(PAGE, "first-hour/worker")), {
    env: {
      ...terminalEnv(),
      SVC_CI_SCHEDULER_URL: `http://${quire}`,
      SVC_CI_CACHE_DIR: path.join(scratch, "cache"),
      SVC_CI_WORK_DIR: scratch,
    },
  });
  expect(worker.code, worker.output).toBe(0);
  const ci = await ciRun.done;
  await transcribe("first-hour/ci-run", docBlock(PAGE, "first-hour/ci-run"), ci);
  expect(ci.code, ci.output).toBe(0);
  expect(ci.output).toMatch(/test\s.*passed/);
  expect(ci.output).toMatch(/^run passed$/m);

  // 8. Merge; the merged branch refuses a commit and names the way out, which works.
  const merge = await step("first-hour/merge", copy, 0);
  expect(merge).toMatch(/'feature\/intro' would merge now/);
  expect(merge).toMatch(/Introduce Quire/);
  const after = await step("first-hour/after-merge", copy, 1);
  expect(after).toMatch(/merged/);
  expect(after).toMatch(/quire switch main/);
  await step("first-hour/next-branch", copy, 0);

  // 9. The pages, in a browser.
  const open = await step("first-hour/open", copy, 0);
  const treeUrl = /http:\/\/\S+\/ui\/repos\/acme\/docs\/-\/tree\S*/.exec(open)?.[0];
  expect(treeUrl, open).toBeDefined();
  await inTheBrowser(treeUrl ?? "");
}, 120_000);

/** Opens the tree `quire open` printed, then the merged proposal and the branch's checks. */
async function inTheBrowser(treeUrl: string): Promise<void> {
  const context = await chromium.browser.newContext();
  try {
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(treeUrl);
    await expect.poll(() => page.content()).toContain("guide.md");
    await screenshot(page, "first-hour-tree");

    await page.goto(`http://${quire}/ui/repos/acme/docs/-/proposals?state=merged`);
    await page.getByRole("link", { name: "Introduce Quire" }).click();
    const proposal = await page.textContent("body");
    expect(proposal).toMatch(/merged/i);
    expect(proposal).toContain("bob@example.com");
    await screenshot(page, "first-hour-proposal");

    await page.goto(`http://${quire}/ui/repos/acme/docs/-/branch/feature/intro`);
    // A row's accessible name is its cells, space-separated: "test passed 2 alice@example.com log".
    const check = page.getByRole("row", { name: /^test passed\b/ });
    expect(await check.count(), (await page.textContent("main")) ?? "").toBe(1);
    expect(await check.getByRole("link", { name: "log" }).count()).toBe(1);
    await screenshot(page, "first-hour-checks");

    // The header's switcher: the same page as bob.
    await page.selectOption("#dev-as", "bob@example.com");
    await page.getByRole("button", { name: "Switch" }).click();
    await expect.poll(() => page.textContent("header")).toContain("Signed in as bob@example.com");
    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
}
