import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { strictApi } from "../../cli/client/index.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";
import { buildTourSite, TOUR_PAGES, type TourPage, type TourSite } from "./tour-pages.ts";

/**
 * The page tour (issue 20, "Every page, every screen"): every page of TOUR_PAGES at desktop width
 * and at 390 px, each in a time zone other than UTC. On each: no sideways scrolling of the page, no
 * console error or CSP violation, a `main` landmark and one `h1`, every moment a `<time>` shown in
 * the reader's zone with its UTC value on hover (and no date outside one), and the keyboard alone:
 * Tab goes round every stop, each showing a focus ring, the page's primary controls and its first
 * content link among them, and Enter follows that link; a page with a form has it filled and
 * submitted with the keyboard. Screenshots: test-results/web/tour-<screen>-<page>.png.
 *
 * One test file per screen (tour-desktop.test.ts, tour-phone.test.ts), so that the two walks, the
 * suite's longest, run in different workers.
 */
const OWNER = "owner@acme.test";

export interface Screen {
  name: string;
  width: number;
  height: number;
  timezoneId: string;
}

export const DESKTOP: Screen = { name: "desktop", width: 1280, height: 800, timezoneId: "America/New_York" };
export const PHONE: Screen = { name: "390", width: 390, height: 844, timezoneId: "Asia/Tokyo" };
/** More Tab presses than any page has stops: a bound, so a focus trap fails fast. */
const MAX_TABS = 150;

/** What the tour reads from a page in one evaluation (runs in the browser). */
interface Layout {
  scrollWidth: number;
  innerWidth: number;
  mains: number;
  h1s: number;
  /** Each `<time>`: its datetime, title and shown text. */
  times: { datetime: string; title: string; text: string }[];
  /** Text outside `<time>` (and outside file content) that looks like a date or says UTC. */
  strayDates: string[];
}

const LAYOUT = `(() => {
  const content = "time, pre, code, textarea, table.lines, .markdown, script, style";
  const stray = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent || "";
    if (/\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}|\\bUTC\\b/.test(text) && !n.parentElement.closest(content))
      stray.push(text.trim().slice(0, 60));
  }
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    mains: document.querySelectorAll("main").length,
    // A rendered Markdown file keeps its own headings; the page's are outside it.
    h1s: [...document.querySelectorAll("h1")].filter((h) => !h.closest(".markdown")).length,
    times: [...document.querySelectorAll("time")].map((t) => ({
      datetime: t.getAttribute("datetime") || "", title: t.getAttribute("title") || "", text: t.textContent || "",
    })),
    strayDates: stray,
  };
})()`;

/** The layout and date problems of the page as loaded, in words (none: an empty list). */
function layoutProblems(p: TourPage, l: Layout): string[] {
  const problems: string[] = [];
  if (l.scrollWidth > l.innerWidth) problems.push(`scrolls sideways: ${l.scrollWidth} > ${l.innerWidth}`);
  if (l.mains !== 1) problems.push(`${l.mains} main landmarks`);
  if (l.h1s !== 1) problems.push(`${l.h1s} h1 headings`);
  if (p.times && l.times.length === 0) problems.push("no <time>");
  for (const t of l.times) {
    const utc = `${t.datetime.replace("T", " ").slice(0, 16)} UTC`;
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(t.datetime))
      problems.push(`time ${t.datetime}: not UTC`);
    if (t.title !== utc) problems.push(`time ${t.datetime}: title ${t.title}`);
    if (t.text === utc || t.text.trim() === "") problems.push(`time ${t.datetime}: shown as ${t.text}`);
  }
  for (const s of l.strayDates) problems.push(`a date outside <time>: ${s}`);
  return problems;
}

/** What has the focus: whether it is the marked element, its outline, its words; null for none. */
const FOCUS = (attr: string) => `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const words = el.matches("input, textarea, select")
    ? (el.labels && el.labels[0] ? el.labels[0].textContent : el.name)
    : el.textContent;
  return { hit: el.hasAttribute("${attr}"), outline: getComputedStyle(el).outlineStyle,
    words: (words || "").trim().replace(/\\s+/g, " ").slice(0, 40) };
})()`;

type Focused = { hit: boolean; outline: string; words: string } | null;

/** Presses Tab until the element marked `attr` has the focus, each stop on the way showing a ring. */
async function tabTo(page: Page, attr: string): Promise<string[]> {
  const problems: string[] = [];
  for (let i = 0; i < MAX_TABS; i++) {
    await page.keyboard.press("Tab");
    const f = (await page.evaluate(FOCUS(attr))) as Focused;
    if (f === null) continue;
    if (f.outline === "none") problems.push(`no focus ring on "${f.words}"`);
    if (f.hit) return problems;
  }
  return [...problems, `Tab never reached the element marked ${attr}`];
}

/**
 * Marks the first link of the page's own content (not the breadcrumbs or tabs, not a download, not
 * an anchor in this page such as a line number); answers its URL.
 */
const MARK_FIRST_LINK = `(() => {
  const here = location.href.split("#")[0];
  const a = [...document.querySelectorAll("main a[href]:not([download])")]
    .find((e) => !e.closest("nav.crumbs, nav.repo") && e.getClientRects().length > 0 && e.href.split("#")[0] !== here);
  if (!a) return null;
  a.setAttribute("data-tour-link", "");
  return a.href;
})()`;

/**
 * Records every focus stop in the page (its words, its outline, whether it is the marked link)
 * until focus comes round to a stop seen before, so a whole page's stops take one read per batch
 * of Tab presses, not one per press.
 */
const RECORD_STOPS = `(() => {
  window.tourStops = [];
  document.addEventListener("focusin", (e) => {
    const el = e.target;
    if (el.hasAttribute("data-tour-seen")) { window.tourWrapped = true; return; }
    el.setAttribute("data-tour-seen", "");
    const words = el.matches("input, textarea, select")
      ? (el.labels && el.labels[0] ? el.labels[0].textContent : el.name)
      : el.textContent;
    window.tourStops.push({ link: el.hasAttribute("data-tour-link"), outline: getComputedStyle(el).outlineStyle,
      words: (words || "").trim().replace(/\\s+/g, " ").slice(0, 40) });
  });
})()`;
const TAB_BATCH = 15;

/**
 * The keyboard alone: Tab through the whole page (a ring on every stop, the page's primary
 * controls among the stops, the first content link too), then Enter on that link follows it.
 */
async function useByKeyboard(page: Page, p: TourPage): Promise<string[]> {
  const focusedOnLoad = p.focused
    ? await page.evaluate(`document.activeElement === document.querySelector(${JSON.stringify(p.focused)})`)
    : false;
  const href = (await page.evaluate(MARK_FIRST_LINK)) as string | null;
  await page.evaluate(RECORD_STOPS);
  let walk = { wrapped: false, stops: [] as { link: boolean; outline: string; words: string }[] };
  for (let pressed = 0; !walk.wrapped && pressed < MAX_TABS; pressed += TAB_BATCH) {
    for (let i = 0; i < TAB_BATCH; i++) await page.keyboard.press("Tab");
    walk = (await page.evaluate(
      "({ wrapped: !!window.tourWrapped, stops: window.tourStops })",
    )) as typeof walk;
  }
  const words = walk.stops.map((f) => f.words);
  const problems = walk.stops.filter((f) => f.outline === "none").map((f) => `no focus ring on "${f.words}"`);
  if (!walk.wrapped) problems.push(`Tab did not come round in ${MAX_TABS} presses`);
  if (p.focused && !focusedOnLoad) problems.push(`${p.focused} does not have the focus on load`);
  if (!p.focused && words[0] !== "Skip to content") problems.push(`the first stop is "${words[0]}"`);
  const missed = (p.controls ?? []).filter((c) => !words.includes(c));
  if (missed.length > 0)
    problems.push(`Tab never reached ${missed.join(", ")} (stops: ${words.join(" | ")})`);
  if (href === null) return [...problems, "no link in the page's content"];
  if (!walk.stops.some((f) => f.link)) return [...problems, `Tab never reached the first link, ${href}`];
  // Reached by Tab above; now Enter on it: the request proves it was followed (it may redirect).
  await page.focus("[data-tour-link]");
  const before = page.url();
  await Promise.all([
    page.waitForRequest(href),
    page.waitForURL((u) => u.href !== before),
    page.keyboard.press("Enter"),
  ]);
  return problems;
}

/** Fills the page's form field by field with the keyboard, submits it with Enter, checks where it lands. */
async function submitWithKeyboard(page: Page, site: TourSite, p: TourPage, width: number): Promise<string[]> {
  const form = p.form;
  if (!form) return [];
  const problems: string[] = [];
  for (const [label, value] of form.fields) {
    await page.getByLabel(label, { exact: true }).evaluate((e) => e.setAttribute("data-tour-field", ""));
    problems.push(...(await tabTo(page, "data-tour-field")));
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type(value(width));
    await page.evaluate(`document.querySelector("[data-tour-field]").removeAttribute("data-tour-field")`);
  }
  // A new document loads, even when the form leads back to the same URL (a proposal's edit form).
  await Promise.all([page.waitForEvent("load"), page.keyboard.press("Enter")]);
  const landed = new URL(page.url()).pathname;
  if (!form.lands(site, width).test(landed)) problems.push(`the form landed on ${landed}`);
  return problems;
}

/** The tour at one screen: its own server, site and browser page (the file's fixtures). */
export function tourAt(screen: Screen): void {
  const app = useFixture(startTestApp);
  const chrome = useBrowser();
  const pageAs = useSignedInPages(app, chrome);
  let site: TourSite;
  beforeAll(async () => {
    site = await buildTourSite(strictApi(api(app.as(OWNER))));
  });

  describe("the page tour", () => {
    it(`shows every page at ${screen.width} px, in ${screen.timezoneId} time, usable by keyboard`, async () => {
      const page = await pageAs(OWNER, {
        viewport: { width: screen.width, height: screen.height },
        timezoneId: screen.timezoneId,
        locale: "en-US",
      });
      const errors = watchErrors(page);
      const problems: Record<string, string[]> = {};
      for (const p of TOUR_PAGES) {
        const path = p.path(site);
        const res = await page.goto(path);
        const found: string[] = res?.status() === (p.status ?? 200) ? [] : [`status ${res?.status()}`];
        found.push(...layoutProblems(p, (await page.evaluate(LAYOUT)) as Layout));
        // The docs keep the desktop views as they first appear (docs/web/); the phone's whole page.
        await screenshot(page, `tour-${screen.name}-${p.name}`, { fullPage: screen.width < 800 });
        found.push(...(await useByKeyboard(page, p)));
        if (p.form) {
          await page.goto(path);
          found.push(...(await submitWithKeyboard(page, site, p, screen.width)));
        }
        // Chromium logs a page's own error status as a failed load: expected of a refusal page.
        const own = `the server responded with a status of ${p.status}`;
        found.push(
          ...errors.splice(0).flatMap((e) => (p.status && e.includes(own) ? [] : [`console: ${e}`])),
        );
        if (found.length > 0) problems[p.name] = found;
      }
      expect(problems).toEqual({});
    }, 180_000);
  });
}
