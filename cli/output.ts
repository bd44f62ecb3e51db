import Table from "cli-table3";
import { createColors } from "picocolors";

/*
 * How the CLI writes: on a terminal, aligned tables, relative times and colour; elsewhere plain
 * tab-separated lines (what `cut` and `awk` expect); with `--json`, the API's own JSON. Colour
 * follows NO_COLOR (https://no-color.org) and FORCE_COLOR, and is off when stdout is not a terminal.
 */

export type Colors = ReturnType<typeof createColors>;

/** One column of a table: its header and how a row shows in it. */
export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** `time`: an ISO time, shown relative on a terminal; `state`: coloured by its word. */
  kind?: "time" | "state";
}

export interface OutputOptions {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  tty: boolean;
  /** Asked at each write: the flags are parsed after the output is made. */
  color: () => boolean;
  json: () => boolean;
  now?: () => Date;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86_400],
  ["month", 30 * 86_400],
  ["week", 7 * 86_400],
  ["day", 86_400],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];
const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "3 minutes ago", "yesterday", "now". */
export function relativeTime(iso: string, now: Date): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((then - now.getTime()) / 1000);
  if (Math.abs(seconds) < 10) return "just now";
  for (const [unit, size] of UNITS)
    if (Math.abs(seconds) >= size) return relative.format(Math.trunc(seconds / size), unit);
  return relative.format(seconds, "second");
}

const GOOD = new Set([
  "passed",
  "approved",
  "ready",
  "open",
  "active",
  "merged",
  "ok",
  "success",
  "accepted",
]);
const BAD = new Set([
  "failed",
  "rejected",
  "blocked",
  "changes_requested",
  "revoked",
  "error",
  "conflict",
  "closed",
]);
const WAITING = new Set([
  "queued",
  "claimed",
  "running",
  "pending",
  "draft",
  "in_progress",
  "paused",
  "suspended",
]);

export class Output {
  readonly tty: boolean;
  private readonly o: OutputOptions;
  private readonly on = createColors(true);
  private readonly off = createColors(false);

  constructor(o: OutputOptions) {
    this.o = o;
    this.tty = o.tty;
  }

  /** picocolors, on or off as NO_COLOR, --no-color and the terminal say. */
  get c(): Colors {
    return this.o.color() ? this.on : this.off;
  }

  get json(): boolean {
    return this.o.json();
  }

  /** A line on stdout. */
  line(text = ""): void {
    this.o.stdout.write(`${text}\n`);
  }

  /** A note on stderr (progress, hints): never mixed into what a script reads. */
  note(text: string): void {
    this.o.stderr.write(`${text}\n`);
  }

  /** The JSON of a value on stdout. */
  writeJson(value: unknown): void {
    this.o.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  private cell<T>(col: Column<T>, row: T): string {
    const v = col.value(row);
    if (v === null || v === undefined || v === "") return this.tty ? this.c.dim("-") : "";
    const text = Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v);
    if (!this.tty) return text;
    if (col.kind === "time") return relativeTime(text, this.o.now?.() ?? new Date());
    if (col.kind === "state") return this.state(text);
    return text;
  }

  /** A state word in its colour: green for good, red for bad, yellow for waiting. */
  state(word: string): string {
    const w = word.toLowerCase();
    if (GOOD.has(w)) return this.c.green(word);
    if (BAD.has(w)) return this.c.red(word);
    if (WAITING.has(w)) return this.c.yellow(word);
    return word;
  }

  /**
   * Rows as an aligned table on a terminal, tab-separated lines otherwise, JSON with --json.
   * `header: false` for lists read as lines (`log`, like `git log --oneline`).
   */
  table<T>(
    rows: readonly T[],
    columns: readonly Column<T>[],
    empty = "nothing to show",
    { header = true }: { header?: boolean } = {},
  ): void {
    if (this.json) {
      this.writeJson(rows);
      return;
    }
    if (!this.tty) {
      for (const row of rows) this.line(columns.map((col) => this.cell(col, row)).join("\t"));
      return;
    }
    if (rows.length === 0) {
      this.note(this.c.dim(empty));
      return;
    }
    const head = header ? columns.map((col) => col.header) : undefined;
    this.line(
      borderless(
        head,
        rows.map((row) => columns.map((col) => this.cell(col, row))),
        this.c,
      ),
    );
  }

  /** One record as `field  value` lines, or its JSON. */
  record<T>(value: T, fields: readonly Column<T>[]): void {
    if (this.json) {
      this.writeJson(value);
      return;
    }
    const width = Math.max(...fields.map((f) => f.header.length));
    for (const f of fields) {
      const label = `${f.header}:`.padEnd(width + 2);
      this.line(`${this.tty ? this.c.bold(label) : label}${this.cell(f, value)}`);
    }
  }

  /** What a mutation did: a sentence on a terminal, the reply's JSON with --json. */
  done(message: string, value?: unknown): void {
    if (this.json) {
      this.writeJson(value ?? { ok: true });
      return;
    }
    this.line(this.tty ? `${this.c.green("✓")} ${message}` : message);
  }
}

/**
 * The one table style of every list (docs/cli.md, "Output"): no borders, bold upper-case headers,
 * two spaces between columns. Commands that format their own rows (the working copy's tables)
 * use it too.
 */
export function borderless(
  head: readonly string[] | undefined,
  rows: readonly string[][],
  c: Colors,
): string {
  const table = new Table({
    ...(head ? { head: head.map((h) => c.bold(h.toUpperCase())) } : {}),
    chars: NO_BORDERS,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 2 },
  });
  table.push(...rows.map((r) => [...r]));
  return table.toString().replace(/ +$/gm, "");
}

const NO_BORDERS = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "",
};
