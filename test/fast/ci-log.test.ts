import { describe, expect, it } from "vitest";
import { ansiToHtml } from "../../functions/web/ansi.ts";
import { logWindow } from "../../functions/web/pages/log-window.ts";

describe("CI log colours as classes (functions/web/ansi.ts)", () => {
  it("turns SGR sequences into spans of classes and escapes the text", () => {
    expect(ansiToHtml("\x1b[1;31mFAIL\x1b[0m <b>&</b>").text).toBe(
      '<span class="ansi-fg-1 ansi-bold">FAIL</span> &lt;b&gt;&amp;&lt;/b&gt;',
    );
    expect(ansiToHtml("\x1b[92mbright\x1b[39m \x1b[44mblue\x1b[49m").text).toBe(
      '<span class="ansi-fg-10">bright</span> <span class="ansi-bg-4">blue</span>',
    );
    // 256-colour: the first 16 have classes, the rest render plain; RGB takes its five numbers.
    expect(ansiToHtml("\x1b[38;5;3mA\x1b[38;5;200mB\x1b[38;2;1;2;3;1mC").text).toBe(
      '<span class="ansi-fg-3">A</span>B<span class="ansi-bold">C</span>',
    );
  });

  it("drops every other escape and control byte, and shows a redrawn line as it ended", () => {
    const out = ansiToHtml("\x1b]0;title\x07a\x1b[2Kb\x1b[?25lc\x00\x07d\x1b\nbar 10%\rbar 100%\r\n").text;
    expect(out).toBe("abcd\nbar 100%\n");
  });

  it("adds no span for a sequence that changes nothing, and keeps styles across lines", () => {
    expect(ansiToHtml("\x1b[31m\x1b[0mplain\x1b[0m").text).toBe("plain");
    expect(ansiToHtml("\x1b[32mone\ntwo\x1b[m three").text).toBe(
      '<span class="ansi-fg-2">one\ntwo</span> three',
    );
  });
});

describe("log windows (functions/web/pages/log-window.ts)", () => {
  const log = Buffer.from(Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join(""));

  it("is the tail by default, cut at a line start", () => {
    const w = logWindow(log, {}, 100);
    expect(w.end).toBe(log.length);
    expect(w.text.startsWith("line ")).toBe(true);
    expect(w.text.endsWith("line 99\n")).toBe(true);
    expect(w.end - w.start).toBeLessThanOrEqual(100);
  });

  it("tiles the log: the window before a start ends there, the window from an end starts there", () => {
    const tail = logWindow(log, {}, 100);
    const before = logWindow(log, { before: tail.start }, 100);
    expect(before.end).toBe(tail.start);
    expect(before.text.endsWith("\n")).toBe(true);
    const after = logWindow(log, { start: before.end }, 100);
    expect(after.start).toBe(tail.start);
    expect(after.text.startsWith("line ")).toBe(true);
    let pieces = "";
    for (let w = logWindow(log, { start: 0 }, 100); ; w = logWindow(log, { start: w.end }, 100)) {
      pieces += w.text;
      if (w.end >= w.size) break;
    }
    expect(pieces).toBe(log.toString());
  });
});
