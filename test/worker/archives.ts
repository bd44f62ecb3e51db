import { gzipSync } from "node:zlib";
import { type Header, pack } from "tar-stream";

/** Entries of a crafted archive: a header, and the body of a file. */
export type Entry = Partial<Header> & { name: string; body?: string | Buffer };

/** A .tar.gz made of exactly these entries, written as given (no name cleaning). */
export async function tarGz(entries: Entry[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on("data", (c: unknown) => {
    chunks.push(c as Buffer);
  });
  const ended = new Promise<void>((resolve, reject) => p.on("end", resolve).on("error", reject));
  for (const { body, ...header } of entries) {
    await new Promise<void>((resolve, reject) => {
      const cb = (err?: Error | null) => (err ? reject(err) : resolve());
      if (body === undefined) p.entry(header, cb);
      else p.entry({ ...header, size: Buffer.byteLength(body) }, body, cb);
    });
  }
  p.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

const TOP = "repo-main-1";
const ok: Entry = { name: `${TOP}/README.md`, body: "# fine\n" };

/**
 * The hostile corpus: each archive with the words its refusal must contain. Every one starts
 * with a harmless file, so the refusal is of the bad entry, not of the archive as a whole.
 */
export const hostileArchives: {
  name: string;
  entries: () => Entry[];
  reason: RegExp;
  limits?: { maxBytes?: number; maxFiles?: number };
}[] = [
  {
    name: "absolute path",
    entries: () => [ok, { name: "/etc/quire-escape", body: "x" }],
    reason: /"\/etc\/quire-escape" is an absolute path/,
  },
  {
    name: "dot-dot",
    entries: () => [ok, { name: `${TOP}/../x`, body: "x" }],
    reason: /"repo-main-1\/\.\.\/x" has a '\.\.' segment/,
  },
  {
    name: "symlink to /etc",
    entries: () => [ok, { name: `${TOP}/etc`, type: "symlink", linkname: "/etc" }],
    reason: /symbolic link to the absolute path \/etc, outside \/src/,
  },
  {
    name: "relative symlink out",
    entries: () => [ok, { name: `${TOP}/a/up`, type: "symlink", linkname: "../../.." }],
    reason: /symbolic link to \.\.\/\.\.\/\.\., which points outside \/src/,
  },
  {
    name: "symlink chain up (sub/up -> .., sub/up2 -> up/..)",
    entries: () => [
      ok,
      { name: `${TOP}/sub/up`, type: "symlink", linkname: ".." },
      { name: `${TOP}/sub/up2`, type: "symlink", linkname: "up/.." },
    ],
    reason: /"repo-main-1\/sub\/up2" is a symbolic link to up\/\.\., which points outside \/src/,
  },
  {
    name: "symlink chain through several links",
    entries: () => [
      ok,
      { name: `${TOP}/a/b/c/l1`, type: "symlink", linkname: ".." },
      { name: `${TOP}/a/b/c/l2`, type: "symlink", linkname: "l1/.." },
      { name: `${TOP}/a/b/c/l3`, type: "symlink", linkname: "l2/.." },
      { name: `${TOP}/a/b/c/l4`, type: "symlink", linkname: "l3/../x" },
    ],
    reason: /"repo-main-1\/a\/b\/c\/l4" is a symbolic link to l3\/\.\.\/x, which points outside \/src/,
  },
  {
    name: "symlink chain ending in an absolute link",
    entries: () => [
      ok,
      { name: `${TOP}/sub/up`, type: "symlink", linkname: ".." },
      { name: `${TOP}/sub/abs`, type: "symlink", linkname: "/" },
    ],
    reason: /"repo-main-1\/sub\/abs" is a symbolic link to the absolute path \/, outside \/src/,
  },
  {
    name: "a later link that turns an earlier one outward",
    entries: () => [
      ok,
      { name: `${TOP}/sub/x`, type: "symlink", linkname: "d/.." },
      { name: `${TOP}/sub/d`, type: "symlink", linkname: ".." },
    ],
    reason: /"repo-main-1\/sub\/x" is a symbolic link to d\/\.\., which points outside \/src/,
  },
  {
    name: "symlink loop",
    entries: () => [
      ok,
      { name: `${TOP}/a`, type: "symlink", linkname: "b" },
      { name: `${TOP}/b`, type: "symlink", linkname: "a/x" },
    ],
    reason: /"repo-main-1\/b" is a symbolic link to a\/x, which goes through more than 40 links \(a loop\)/,
  },
  {
    name: "write through a symlink",
    entries: () => [
      ok,
      { name: `${TOP}/d`, type: "symlink", linkname: "." },
      { name: `${TOP}/d/x`, body: "x" },
    ],
    reason: /is below the symbolic link d/,
  },
  {
    name: "hardlink outside",
    entries: () => [ok, { name: `${TOP}/passwd`, type: "link", linkname: "/etc/passwd" }],
    reason: /hard link to the absolute path \/etc\/passwd/,
  },
  {
    name: "hardlink up",
    entries: () => [ok, { name: `${TOP}/shadow`, type: "link", linkname: `${TOP}/../../etc/shadow` }],
    reason: /hard link to .*outside \/src/,
  },
  {
    name: "character device",
    entries: () => [ok, { name: `${TOP}/null`, type: "character-device", devmajor: 1, devminor: 3 }],
    reason: /is a character device/,
  },
  {
    name: "block device",
    entries: () => [ok, { name: `${TOP}/sda`, type: "block-device", devmajor: 8, devminor: 0 }],
    reason: /is a block device/,
  },
  { name: "fifo", entries: () => [ok, { name: `${TOP}/pipe`, type: "fifo" }], reason: /is a fifo/ },
  {
    name: "duplicate file",
    entries: () => [ok, { name: `${TOP}/README.md`, body: "again" }],
    reason: /appears twice/,
  },
  {
    name: "too many files",
    entries: () => Array.from({ length: 12 }, (_, i) => ({ name: `${TOP}/f${i}`, body: "x" })),
    reason: /more than 10 entries/,
    limits: { maxFiles: 10 },
  },
  {
    name: "too large",
    entries: () => [ok, { name: `${TOP}/big`, body: Buffer.alloc(64 * 1024) }],
    reason: /unpacks to more than 4096 bytes/,
    limits: { maxBytes: 4096 },
  },
  { name: "not a tar.gz", entries: () => [], reason: /could not be read as a \.tar\.gz/ },
];

/** A valid archive of a few files, one folder and an inside symlink: what unpacking must keep. */
export function benignEntries(): Entry[] {
  return [
    { name: `${TOP}/`, type: "directory" },
    { name: `${TOP}/README.md`, body: "# fine\n" },
    { name: `${TOP}/bin/run.sh`, body: "#!/bin/sh\necho hi\n", mode: 0o4777 },
    { name: `${TOP}/docs/a.md`, body: "a\n" },
    { name: `${TOP}/docs/link.md`, type: "symlink", linkname: "a.md" },
    { name: `${TOP}/docs/top`, type: "symlink", linkname: ".." },
    { name: `${TOP}/docs/hard.md`, type: "link", linkname: `${TOP}/docs/a.md` },
  ];
}
