import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { extract } from "tar-stream";
import { expect } from "vitest";
import { treeResponse } from "../../shared/api/content.ts";
import type { TestApp } from "../support/app.ts";
import type { RepoFixture } from "../support/world.ts";

/** One member of a downloaded archive. */
export interface ArchiveEntry {
  name: string;
  type: string | null | undefined;
  mode: number | undefined;
  uid: number | undefined;
  gid: number | undefined;
  uname: string | undefined;
  gname: string | undefined;
  mtime: Date | undefined;
  size: number | undefined;
  data: Buffer;
}

export interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

/** GET `path` with `headers` (no credentials unless given) and the whole body as bytes. */
export async function download(app: TestApp, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(app.url + path, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** GET `path` signed in as `email`. */
export async function downloadAs(app: TestApp, email: string, path: string): Promise<Download> {
  return download(app, path, { authorization: `Bearer ${await app.idp.token(email)}` });
}

/** The entries of a `.tar.gz`, in archive order, read with tar-stream after gunzip. */
export async function untar(gz: Buffer): Promise<ArchiveEntry[]> {
  const ex = extract();
  const entries: ArchiveEntry[] = [];
  const reading = (async () => {
    for await (const entry of ex) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(Buffer.from(chunk as Uint8Array));
      const h = entry.header;
      entries.push({
        name: h.name,
        type: h.type,
        mode: h.mode,
        uid: h.uid,
        gid: h.gid,
        uname: h.uname,
        gname: h.gname,
        mtime: h.mtime,
        size: h.size,
        data: Buffer.concat(chunks),
      });
    }
  })();
  ex.end(gunzipSync(gz));
  await reading;
  return entries;
}

/** A successful archive download's entries, after checking status and headers. */
export async function archiveOf(res: Download, fileName: string): Promise<ArchiveEntry[]> {
  expect(res.status, res.bytes.toString("utf8").slice(0, 300)).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/gzip");
  expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${fileName}"`);
  return untar(res.bytes);
}

/** The archive as a map of path (top folder stripped, checked to be `folder`) to bytes. */
export function filesOf(entries: ArchiveEntry[], folder: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const e of entries) {
    expect(e.name.startsWith(`${folder}/`), e.name).toBe(true);
    files.set(e.name.slice(folder.length + 1), e.data);
  }
  return files;
}

/** Every page of GET tree at (branch, at): path → version_id. */
export async function treeOf(fx: RepoFixture, query = ""): Promise<Map<string, string>> {
  const tree = new Map<string, string>();
  let after = "";
  for (;;) {
    const res = await fx.client.get(
      `${fx.base}/tree?limit=1000${query}${after ? `&after=${encodeURIComponent(after)}` : ""}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { entries } = treeResponse.parse(res.body);
    for (const e of entries) tree.set(e.path, e.version_id);
    const last = entries.at(-1);
    if (entries.length < 1000 || !last) return tree;
    after = last.path;
  }
}

export const sha256hex = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/** Sorted by UTF-8 bytes, as the archive orders its entries. */
export const byteOrder = (names: string[]) =>
  [...names].sort((a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));
