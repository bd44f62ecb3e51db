/**
 * Long CI logs are shown a window at a time (docs/web.md, "CI"): at most LOG_WINDOW_BYTES,
 * cut at line ends so that a line (and the colour codes on it) is never split between two
 * windows. A window is asked for by where it starts (`start`, the later windows) or where it
 * ends (`before`, the earlier ones); with neither it is the log's tail, where a failure is.
 * Windows tile the log: the link to the next one starts exactly where this one ends.
 */

export const LOG_WINDOW_BYTES = 64 * 1024;
/** The run page shows less of each log (every check's tail on one page); the log page shows more. */
export const RUN_PAGE_TAIL_BYTES = 16 * 1024;
/** A line longer than this is cut where the window falls rather than searched for its end. */
const MAX_LINE_SEARCH = 4096;
const NEWLINE = 0x0a;

export interface LogWindow {
  text: string;
  start: number;
  end: number;
  size: number;
}

/** The first line boundary at or after `at` (within MAX_LINE_SEARCH bytes, else `at`). */
function lineBoundary(body: Buffer, at: number): number {
  if (at <= 0 || at >= body.length || body[at - 1] === NEWLINE) return Math.max(0, Math.min(at, body.length));
  const nl = body.indexOf(NEWLINE, at);
  return nl === -1 || nl + 1 - at > MAX_LINE_SEARCH ? at : nl + 1;
}

export function logWindow(
  body: Buffer,
  q: { start?: number | undefined; before?: number | undefined },
  bytes = LOG_WINDOW_BYTES,
): LogWindow {
  const size = body.length;
  let start: number;
  let end: number;
  if (q.start !== undefined) {
    start = lineBoundary(body, q.start);
    end = lineBoundary(body, start + bytes);
  } else {
    end = Math.min(q.before ?? size, size);
    start = lineBoundary(body, end - bytes);
    if (start > end) start = end;
  }
  return { text: body.subarray(start, end).toString("utf8"), start, end, size };
}

/** A log up to its last line end: a line still being written is shown once it is whole. */
export const wholeLines = (body: Buffer): Buffer => body.subarray(0, body.lastIndexOf(NEWLINE) + 1);

/** What a streaming reader of a running check's log lacks (the run page's script, every 2 s). */
export interface LogIncrement extends LogWindow {
  /** True when `text` replaces what the reader shows instead of following it. */
  replace: boolean;
}

/**
 * The part of a log a reader who has its first `after` bytes lacks. Until the log is whole
 * (`final`) only whole lines are given, so a line and its colour codes arrive together; when more
 * came than the run page shows (or the log is not the one the reader read), its tail instead.
 */
export function logIncrement(body: Buffer, after: number, final: boolean): LogIncrement {
  const shown = final ? body : wholeLines(body);
  if (after > body.length || shown.length - after > RUN_PAGE_TAIL_BYTES)
    return { ...logWindow(shown, {}, RUN_PAGE_TAIL_BYTES), replace: true };
  const end = Math.max(after, shown.length);
  return {
    text: body.subarray(after, end).toString("utf8"),
    start: after,
    end,
    size: body.length,
    replace: false,
  };
}
