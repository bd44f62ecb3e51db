import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlobReader, listCommits } from "../../cli/git/git.ts";
import { trailer } from "../../cli/git/trailers.ts";
import { filePathProblem, unwritablePathProblem } from "../../shared/api/path-rules.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { type RepoHandle, useFixture, world } from "../support/world.ts";
import { expectExit, quireAs, runQuireOnTty, tempHome } from "./support.ts";

/*
 * `quire import-git` and `quire export-git` (docs/git.md) over real HTTP against a real server,
 * on a small git repository made here with the git binary: a binary file, a symlink, a
 * submodule, refused paths, a mode change, an empty commit, a deletion and a merge.
 */

const app = useFixture(startTestApp);
/** A server whose body limit (64 KiB) is far below what the import's parts are cut at (16 MiB). */
const smallApp = useFixture(() => startTestApp({ SVC_MAX_BODY_BYTES: String(64 * 1024) }));
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Ada Writer",
  GIT_AUTHOR_EMAIL: "ada@example.com",
  GIT_COMMITTER_NAME: "Ada Writer",
  GIT_COMMITTER_EMAIL: "ada@example.com",
  GIT_AUTHOR_DATE: "2024-03-01T10:00:00+02:00",
  GIT_COMMITTER_DATE: "2024-03-01T10:00:00+02:00",
};

/** 30 commits: the odd cases first, then notes, a deletion, a side branch merged, and more notes. */
const HISTORY = String.raw`
set -e
git init -q -b main
c() { git add -A && git commit -q -m "$1"; }
printf '# Guide\n' > README.md; c "Start the guide"
printf 'PNG\0\001\377\376 bytes' > logo.bin; c "Add a binary logo"
ln -s README.md link.md; c "Link to the readme"
git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),vendor/lib"; git commit -q -m "Add a submodule"
mkdir .quire; printf 'planted' > .quire/copy.json; printf 'x' > 'back\slash.md'; c "Plant refused paths"
printf 'echo hi\n' > run.sh; c "Add a script"
chmod +x run.sh; c "Make the script executable"
git commit -q --allow-empty -m "Nothing at all"
for i in $(seq 1 12); do mkdir -p notes; printf 'note %s\n' "$i" > "notes/$i.md"; c "Note $i

A body line for note $i."; done
git rm -q notes/3.md; git commit -q -m "Drop note 3"
git checkout -q -b side HEAD~2
printf 'from the side\n' > side.md; c "Side work"
printf 'more side\n' >> side.md; c "More side work"
git checkout -q main
git merge -q --no-ff side -m "Merge side"
for i in 13 14 15; do printf 'note %s\n' "$i" > "notes/$i.md"; c "Note $i"; done
rm link.md; printf 'now a file\n' > link.md; c "Replace the link with a file"
`;

const gitTrees = new Map<string, Promise<Record<string, string>>>();

/** The paths Quire stores of a git commit's tree, with the SHA-256 of each (Quire's version_id). */
function gitTree(dir: string, sha: string): Promise<Record<string, string>> {
  const key = `${dir}\0${sha}`;
  const known = gitTrees.get(key) ?? readGitTree(dir, sha);
  gitTrees.set(key, known);
  return known;
}

async function readGitTree(dir: string, sha: string): Promise<Record<string, string>> {
  const out = execFileSync("git", ["ls-tree", "-r", "-z", sha], { cwd: dir, env: GIT_ENV }).toString();
  const blobs = new BlobReader(dir);
  const tree: Record<string, string> = {};
  try {
    for (const entry of out.split("\0").filter(Boolean)) {
      const [meta = "", p = ""] = entry.split("\t");
      const [mode = "", , blob = ""] = meta.split(" ");
      if (!mode.startsWith("100") || (filePathProblem(p) ?? unwritablePathProblem(p))) continue;
      tree[p] = createHash("sha256")
        .update(await blobs.read(blob))
        .digest("hex");
    }
  } finally {
    blobs.close();
  }
  return tree;
}

async function quireTree(repo: RepoHandle, branch: string, at: number): Promise<Record<string, string>> {
  const tree: Record<string, string> = {};
  for (let after: string | undefined, page = 1000; page === 1000; ) {
    const res = await api(repo.client).get("/repos/:repo*/-/tree", {
      params: { repo: repo.repo },
      query: { branch, at: String(at), limit: "1000", ...(after === undefined ? {} : { after }) },
    });
    const entries = okBody(res).entries;
    for (const e of entries) tree[e.path] = e.version_id;
    page = entries.length;
    after = entries.at(-1)?.path;
  }
  return tree;
}

/** The repo's commits on `main`, oldest first, with the git commit each came from. */
async function mainCommits(repo: RepoHandle) {
  const head = okBody(
    await api(repo.client).get("/repos/:repo*/-/branch/:branch*", {
      params: { repo: repo.repo, branch: "main" },
    }),
  ).head_sequence;
  const chain = okBody(
    await api(repo.client).get("/repos/:repo*/-/chain", {
      params: { repo: repo.repo },
      query: { from: "1", to: String(Math.max(head, 1)) },
    }),
  ).commits;
  return chain.map((c) => ({ ...c, git: trailer(c.message, "Git-Commit") }));
}

const bodyOf = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/**
 * A proxy to the app that, for the `dropAt`-th commit request, lets the server do the work and
 * then cuts the connection instead of answering: the answer is lost, as on a network fault.
 */
async function lossyProxy(upstream: string, dropAt: number) {
  let commits = 0;
  const server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)),
    ) as Record<string, string>;
    const answer = await fetch(upstream + req.url, {
      method: req.method ?? "GET",
      headers,
      ...(body.length ? { body } : {}),
    });
    const bytes = Buffer.from(await answer.arrayBuffer());
    if (req.method === "POST" && req.url?.endsWith("/-/commit") && ++commits === dropAt) {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    commits: () => commits,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe("quire import-git and export-git", () => {
  let dir: string;
  let gitDir: string;
  let home: { dir: string; remove(): Promise<void> };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "quire-git-"));
    gitDir = path.join(dir, "origin");
    execFileSync("mkdir", ["-p", gitDir]);
    execFileSync("bash", ["-c", HISTORY], { cwd: gitDir, env: GIT_ENV });
    home = await tempHome();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await home.remove();
  });

  const quire = (repo: RepoHandle) => quireAs(app, home.dir, repo.owner);

  /** Every Quire commit holds its git commit's tree (what Quire stores of it), each git commit once. */
  async function expectMirrors(repo: RepoHandle, source: string) {
    const commits = await mainCommits(repo);
    const shas = commits.map((c) => c.git);
    expect(new Set(shas).size).toBe(shas.length);
    for (const c of commits)
      expect({ at: c.sequence, tree: await quireTree(repo, "main", c.sequence) }).toEqual({
        at: c.sequence,
        tree: await gitTree(source, c.git ?? ""),
      });
    return commits;
  }

  it("replays each commit, reports what it leaves out, and refuses a main with commits", async () => {
    const repo = await world(app).repo();
    const r = expectExit(await quire(repo)(["--json", "import-git", gitDir, repo.repo]), 0);
    for (const what of [
      "left out 'link.md' (git",
      "a symbolic link (to 'README.md')",
      "left out 'vendor/lib'",
      "a submodule",
      ".quire/copy.json",
      "back\\slash.md",
    ])
      expect(r.stderr).toContain(what);
    const result = r.json<{ commits: number; unchanged: number; left_out: { path: string }[] }>();
    expect(result.left_out.map((l) => l.path).sort()).toEqual(
      [".quire/copy.json", "back\\slash.md", "link.md", "vendor/lib"].sort(),
    );
    const gitCommits = await listCommits(gitDir, "HEAD");
    const nonMerge = gitCommits.filter((c) => c.parents <= 1);
    // The link, the submodule, the refused paths, the mode change and the empty commit store nothing.
    expect(result).toMatchObject({ commits: nonMerge.length - 5, unchanged: 5 });
    const commits = await expectMirrors(repo, gitDir);
    const logo = await api(repo.client).get("/repos/:repo*/-/tree", {
      params: { repo: repo.repo },
      query: { branch: "main" },
    });
    expect(okBody(logo).entries.find((e) => e.path === "logo.bin")?.binary).toBe(true);
    const note1 = commits.find((c) => c.message.startsWith("Note 1\n"));
    expect(note1?.message).toMatch(
      /^Note 1\n\nA body line for note 1\.\n\nGit-Commit: [0-9a-f]{40}\nGit-Author: Ada Writer <ada@example\.com>\nGit-Date: 2024-03-01T10:00:00\+02:00$/,
    );

    // Run again: nothing new to import, nothing duplicated.
    const again = expectExit(await quire(repo)(["--json", "import-git", gitDir, repo.repo]), 0);
    expect(again.json()).toMatchObject({ commits: 0, resumed_after: gitCommits.at(-1)?.sha });
    expect((await mainCommits(repo)).length).toBe(commits.length);

    // Read up to the merge: the last commit brings the merge's own tree, with its trailers.
    const merge = gitCommits.find((c) => c.parents > 1);
    const upToMerge = await world(app).repo();
    expectExit(await quire(upToMerge)(["import-git", gitDir, upToMerge.repo, "--from", merge?.sha ?? ""]), 0);
    const last = (await mainCommits(upToMerge)).at(-1);
    expect(last?.git).toBe(merge?.sha);
    expect(await quireTree(upToMerge, "main", last?.sequence ?? 0)).toEqual(
      await gitTree(gitDir, merge?.sha ?? ""),
    );

    const other = await world(app).repo();
    await other.commit("main", { "mine.md": "mine" });
    const refused = expectExit(await quire(other)(["import-git", gitDir, other.repo]), 1);
    expect(refused.stderr).toContain("'main' of");
    expect(refused.stderr).toContain("--into-main");
  });

  it("squashes the tree into one commit on a new branch", async () => {
    const repo = await world(app).repo();
    await repo.commit("main", { "kept.md": "kept" });
    const r = expectExit(
      await quire(repo)([
        "--json",
        "import-git",
        gitDir,
        repo.repo,
        "--mode",
        "squash",
        "--branch",
        "import/git",
      ]),
      0,
    );
    expect(r.stderr).toContain("created branch 'import/git' from main");
    // The submodule was gone by the head; the refused paths are still there.
    expect(r.stderr).not.toContain("a submodule");
    expect(r.stderr).toContain("left out '.quire/copy.json'");
    const head = r.json<{ head_sequence: number; commits: number }>();
    expect(head.commits).toBe(1);
    const commit = okBody(
      await api(repo.client).get("/repos/:repo*/-/commit/:sequence", {
        params: { repo: repo.repo, sequence: String(head.head_sequence) },
      }),
    );
    expect(commit.message).toContain("Git-Import: squash");
    const headSha = execFileSync("git", ["rev-parse", "HEAD"], { cwd: gitDir }).toString().trim();
    // On a terminal: a progress bar, then the summary line.
    const tty = await runQuireOnTty(
      ["import-git", gitDir, repo.repo, "--mode", "squash", "--branch", "again"],
      home.dir,
      {
        env: { QUIRE_SERVER: app.url, QUIRE_TOKEN: await app.idp.token(repo.owner) },
      },
    );
    expect(tty.code).toBe(0);
    expect(tty.stdout).toContain("importing");
    expect(tty.stdout).toContain(
      `imported HEAD (git ${headSha.slice(0, 10)}) into ${repo.repo} 'again': 1 commit made`,
    );
    const kept = await quireTree(repo, "main", 1);
    expect(await quireTree(repo, "import/git", head.head_sequence)).toEqual({
      ...kept,
      ...(await gitTree(gitDir, headSha)),
    });
  });

  it("cuts a git commit of more than 1,000 files into parts", async () => {
    const wide = path.join(dir, "wide");
    execFileSync("mkdir", ["-p", wide]);
    execFileSync(
      "bash",
      [
        "-c",
        'git init -q -b main && mkdir d && for i in $(seq 1 1001); do echo "$i" > "d/$i.md"; done && git add -A && git commit -q -m "Many files"',
      ],
      { cwd: wide, env: GIT_ENV },
    );
    const repo = await world(app).repo();
    const r = expectExit(await quire(repo)(["--json", "import-git", wide, repo.repo]), 0);
    expect(r.json()).toMatchObject({ commits: 2 });
    const commits = await mainCommits(repo);
    expect(commits.map((c) => trailer(c.message, "Git-Part"))).toEqual(["1/2", "2/2"]);
    expect(commits.map((c) => c.files.length)).toEqual([1000, 1]);
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: wide }).toString().trim();
    expect(await quireTree(repo, "main", commits[1]?.sequence ?? 0)).toEqual(await gitTree(wide, head));
  });

  /** A git repository of one commit of 8 files of 16,000 bytes of text each, then a small edit. */
  function heavyRepo(name: string): { dir: string; first: string; head: string } {
    const heavy = path.join(dir, name);
    execFileSync("mkdir", ["-p", heavy]);
    execFileSync(
      "bash",
      [
        "-c",
        'git init -q -b main && for i in $(seq 1 8); do head -c 12000 /dev/urandom | base64 -w0 > "f$i.txt"; done && git add -A && git commit -q -m "Heavy" && echo edited > f1.txt && git commit -qam "Edit"',
      ],
      { cwd: heavy, env: GIT_ENV },
    );
    const rev = (r: string) => execFileSync("git", ["rev-parse", r], { cwd: heavy }).toString().trim();
    return { dir: heavy, first: rev("HEAD~1"), head: rev("HEAD") };
  }

  it("cuts smaller when the server answers 413, and keeps the smaller size for the run", async () => {
    const heavy = heavyRepo("heavy");
    const repo = await world(smallApp).repo();
    const r = expectExit(
      await quireAs(smallApp, home.dir, repo.owner)(["--json", "import-git", heavy.dir, repo.repo]),
      0,
    );
    // 128,000 bytes (171 KiB as base64) is refused, then 64,000; parts of 2 files fit in 64 KiB.
    expect(r.stderr).toMatch(/over the server's request limit; cutting parts at 4 files/);
    expect(r.stderr).toMatch(/over the server's request limit; cutting parts at 2 files/);
    expect(r.json()).toMatchObject({ commits: 5 });
    const commits = await mainCommits(repo);
    expect(commits.map((c) => [trailer(c.message, "Git-Part"), trailer(c.message, "Git-Files")])).toEqual([
      ["1/4", "2/8"],
      ["2/4", "4/8"],
      ["3/4", "6/8"],
      ["4/4", "8/8"],
      [undefined, undefined],
    ]);
    expect(commits.map((c) => c.files.length)).toEqual([2, 2, 2, 2, 1]);
    expect(await quireTree(repo, "main", commits[3]?.sequence ?? 0)).toEqual(
      await gitTree(heavy.dir, heavy.first),
    );
    expect(await quireTree(repo, "main", commits[4]?.sequence ?? 0)).toEqual(
      await gitTree(heavy.dir, heavy.head),
    );
  });

  it("resumes a commit cut into parts after the file changes written, whatever the part size", async () => {
    const heavy = heavyRepo("heavy-resume");
    const repo = await world(app).repo();
    // What a run with --part-size 32K left after its first part: 2 of the 8 files, and trailers.
    const show = (p: string) => execFileSync("git", ["show", `${heavy.first}:${p}`], { cwd: heavy.dir });
    const message = `Heavy\n\nGit-Commit: ${heavy.first}\nGit-Author: Ada Writer <ada@example.com>\nGit-Date: 2024-03-01T10:00:00+02:00\nGit-Part: 1/4\nGit-Files: 2/8`;
    await repo.commit("main", { "f1.txt": show("f1.txt"), "f2.txt": show("f2.txt") }, message);
    const sizes = expectExit(
      await quire(repo)(["import-git", "--verbose", "--part-size", "16M", heavy.dir, repo.repo]),
      0,
    );
    expect(sizes.stderr).toMatch(/resuming after git commit [0-9a-f]{10} \(0 of 2 done\)/);
    const commits = await mainCommits(repo);
    expect(commits.map((c) => [trailer(c.message, "Git-Files"), c.files.length])).toEqual([
      ["2/8", 2],
      ["8/8", 6],
      [undefined, 1],
    ]);
    expect(await quireTree(repo, "main", commits[1]?.sequence ?? 0)).toEqual(
      await gitTree(heavy.dir, heavy.first),
    );
    expect(await quireTree(repo, "main", commits[2]?.sequence ?? 0)).toEqual(
      await gitTree(heavy.dir, heavy.head),
    );
    // A size that is no size is a usage error.
    expectExit(await quire(repo)(["import-git", "--part-size", "12", heavy.dir, repo.repo]), 2);
  });

  it("resumes after being killed mid-way without duplicating commits", async () => {
    const repo = await world(app).repo();
    const controller = new AbortController();
    const first = await quire(repo)(["import-git", "--verbose", gitDir, repo.repo], {
      signal: controller.signal,
      onStderr: (_t, all) => {
        if ((all.match(/→/g) ?? []).length >= 6) controller.abort();
      },
    });
    expect(first.code).not.toBe(0);
    const landed = (await mainCommits(repo)).length;
    expect(landed).toBeGreaterThanOrEqual(6);
    const second = expectExit(await quire(repo)(["import-git", "--verbose", gitDir, repo.repo]), 0);
    expect(second.stderr).toMatch(/resuming after git commit [0-9a-f]{10}/);
    await expectMirrors(repo, gitDir);
  });

  it("retries a commit whose answer was lost with the same Idempotency-Key: no duplicate", async () => {
    const repo = await world(app).repo();
    const proxy = await lossyProxy(app.url, 3);
    try {
      const r = expectExit(
        await quire(repo)(["--json", "import-git", gitDir, repo.repo], { env: { QUIRE_SERVER: proxy.url } }),
        0,
      );
      const made = r.json<{ commits: number }>().commits;
      // One request more than commits made: the third, sent again after its answer was lost.
      expect(proxy.commits()).toBe(made + 1);
      expect((await mainCommits(repo)).length).toBe(made);
      await expectMirrors(repo, gitDir);
    } finally {
      await proxy.close();
    }
  });

  it("exports a branch whose re-import has the same tree at every sequence", async () => {
    const repo = await world(app).repo();
    expectExit(await quire(repo)(["import-git", gitDir, repo.repo]), 0);
    const exported = path.join(dir, "exported");
    const r = expectExit(await quire(repo)(["--json", "export-git", repo.repo, exported]), 0);
    const commits = await mainCommits(repo);
    expect(r.json()).toMatchObject({ commits: commits.length, head_sequence: commits.at(-1)?.sequence });
    const log = await listCommits(exported, "HEAD");
    expect(log.map((c) => trailer(c.message, "Quire-Sequence"))).toEqual(
      commits.map((c) => String(c.sequence)),
    );
    expect(log.map((c) => trailer(c.message, "Quire-Hash"))).toEqual(commits.map((c) => c.hash));
    expect(log[0]?.author).toBe(`${repo.owner} <${repo.owner}>`);

    const again = await world(app).repo();
    expectExit(await quire(again)(["import-git", exported, again.repo]), 0);
    const reimported = await mainCommits(again);
    expect(reimported.length).toBe(commits.length);
    for (const [i, c] of commits.entries()) {
      const twin = reimported[i];
      expect(twin?.git).toBe(log[i]?.sha);
      expect(await quireTree(again, "main", twin?.sequence ?? 0)).toEqual(
        await quireTree(repo, "main", c.sequence),
      );
    }
    const refused = expectExit(await quire(repo)(["export-git", repo.repo, exported]), 1);
    expect(refused.stderr).toContain("is not empty");
  });
});
