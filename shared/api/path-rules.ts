/**
 * The rules a path must meet to be written (docs/names.md, "Paths that cannot be written"), on
 * top of those every path meets (names.ts). Free of zod: the CLI loads this module to
 * refuse the same paths when it writes files, and zod costs a CLI run most of a second.
 *
 * Reads and deletions do not apply these rules, so a path written before they existed can still
 * be read and deleted.
 */

/** The folder a working copy keeps its metadata in (cli/workcopy/meta.ts): git's `.git`. */
export const COPY_META_DIR = ".quire";

/** NAME_MAX of ext4, XFS and btrfs in bytes; APFS and NTFS allow 255 characters, never fewer bytes. */
export const MAX_SEGMENT_BYTES = 255;

/**
 * Code points HFS+ leaves out when it compares names, so `.qu\u200Cire` opens `.quire` on a Mac
 * (git refuses the same list for `.git`, CVE-2014-9390).
 */
const HFS_IGNORED = /[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/gu;

/**
 * Whether a file system may open `segment` as the working copy's `.quire` folder: in any case
 * (case-insensitive file systems), with HFS+'s ignored code points, with trailing dots and spaces
 * or an NTFS stream suffix (`.quire.`, `.quire::$INDEX_ALLOCATION`: Windows drops or reads past
 * them), or as the NTFS short name `QUIRE~1`. On Linux only `.quire` itself is special; the rest
 * is refused because a working copy may be cloned on any of these systems.
 */
export function isReservedSegment(segment: string): boolean {
  const beforeStream = segment.replace(HFS_IGNORED, "").split(":")[0] ?? "";
  const folded = beforeStream.replace(/[. ]+$/, "").toLowerCase();
  return folded === COPY_META_DIR || /^quire~\d+$/.test(folded);
}

/**
 * Every reserved form holds a `q` or `Q`: a path without one is ruled out without splitting it.
 * `status` asks this of every file (10,000 paths: about 1 ms this way, 12 to 60 ms splitting each).
 */
const mayBeReserved = (path: string) => /q/i.test(path);

/** Whether any segment of `path` is reserved (isReservedSegment). */
export function hasReservedSegment(path: string): boolean {
  return mayBeReserved(path) && path.split("/").some(isReservedSegment);
}

const MAX_PATH_BYTES = 1024;

/** Why `path` is not a valid file path (docs/names.md), or null when it is: any path, read or written. */
export function filePathProblem(path: string): string | null {
  if (path === "") return "must not be empty";
  if (Buffer.byteLength(path, "utf8") > MAX_PATH_BYTES) return `must be at most ${MAX_PATH_BYTES} bytes`;
  if (path.startsWith("/")) return "must not start with '/'";
  if (path.includes("\\")) return "must not contain a backslash";
  if (path.includes("\0")) return "must not contain NUL";
  if (/\p{Cc}/u.test(path)) return "must not contain control characters";
  const parts = path.split("/");
  if (parts.some((p) => p === "")) return "must not contain empty segments ('//' or a trailing '/')";
  if (parts.some((p) => p === "..")) return "must not contain '..' segments";
  if (parts.some((p) => p === ".")) return "must not contain '.' segments";
  return null;
}

/** Why `path` may not be written, or null when it may; the reason reads after the path. */
export function unwritablePathProblem(path: string): string | null {
  // A UTF-16 unit is at most 3 bytes of UTF-8: a short path has no segment over the limit.
  if (path.length * 3 <= MAX_SEGMENT_BYTES && !mayBeReserved(path)) return null;
  for (const segment of path.split("/")) {
    const bytes = Buffer.byteLength(segment, "utf8");
    if (bytes > MAX_SEGMENT_BYTES)
      return `has a segment of ${bytes} bytes; a segment may have at most ${MAX_SEGMENT_BYTES} bytes of UTF-8`;
    if (isReservedSegment(segment))
      return `has a segment '${segment.slice(0, 40)}' that a file system may open as '${COPY_META_DIR}', which working copies keep for themselves`;
  }
  return null;
}
