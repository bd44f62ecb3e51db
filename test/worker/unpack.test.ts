import { lstat, mkdtemp, readdir, readFile, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { ArchiveRefused, unpackArchive } from "../../worker/archive/unpack.ts";
import { benignEntries, hostileArchives, tarGz } from "./archives.ts";

const limits = { maxBytes: 1024 * 1024, maxFiles: 1000 };
const dirs: string[] = [];
async function freshDir(): Promise<{ root: string; dest: string }> {
  const root = await mkdtemp(path.join(tmpdir(), "quire-unpack-"));
  dirs.push(root);
  // `dest` is one level down, so anything escaping it lands in `root`, where the test can see it.
  const dest = path.join(root, "src");
  await import("node:fs/promises").then((fs) => fs.mkdir(dest));
  return { root, dest };
}
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe("unpacking a source archive", () => {
  it("keeps files, folders, modes without setuid, inside links and inside hard links", async () => {
    const { dest } = await freshDir();
    const stats = await unpackArchive(Readable.from(await tarGz(benignEntries())), dest, limits);
    expect(stats.files).toBe(6);
    expect(await readFile(path.join(dest, "README.md"), "utf8")).toBe("# fine\n");
    expect((await lstat(path.join(dest, "bin/run.sh"))).mode & 0o7777).toBe(0o755);
    expect((await lstat(path.join(dest, "docs/a.md"))).mode & 0o7777).toBe(0o644);
    expect(await readlink(path.join(dest, "docs/link.md"))).toBe("a.md");
    expect(await readlink(path.join(dest, "docs/top"))).toBe("..");
    expect((await lstat(path.join(dest, "docs/hard.md"))).nlink).toBe(2);
  });

  it("keeps chains of links that stay inside, and links to what is not there yet", async () => {
    const { dest } = await freshDir();
    const top = "repo-main-1";
    const entries = [
      { name: `${top}/docs/a.md`, body: "a\n" },
      { name: `${top}/sub/up`, type: "symlink" as const, linkname: ".." },
      { name: `${top}/sub/docs`, type: "symlink" as const, linkname: "up/docs" },
      { name: `${top}/sub/back`, type: "symlink" as const, linkname: "docs/../sub/up/sub" },
      { name: `${top}/later`, type: "symlink" as const, linkname: "made-later/.." },
      { name: `${top}/made-later/file`, body: "x" },
    ];
    await unpackArchive(Readable.from(await tarGz(entries)), dest, limits);
    expect(await readFile(path.join(dest, "sub/docs/a.md"), "utf8")).toBe("a\n");
    expect(await readlink(path.join(dest, "sub/back"))).toBe("docs/../sub/up/sub");
  });

  for (const hostile of hostileArchives) {
    it(`refuses: ${hostile.name}`, async () => {
      const { root, dest } = await freshDir();
      const data =
        hostile.entries().length === 0 ? Buffer.from("not gzip at all") : await tarGz(hostile.entries());
      const err = await unpackArchive(Readable.from(data), dest, { ...limits, ...hostile.limits }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ArchiveRefused);
      expect((err as Error).message).toMatch(hostile.reason);
      // Nothing was written beside the destination.
      expect(await readdir(root)).toEqual(["src"]);
    });
  }
});
