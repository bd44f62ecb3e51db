import { mkdir } from "node:fs/promises";
import path from "node:path";
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from "playwright-core";
import { afterEach, beforeAll } from "vitest";
import type { TestApp } from "../support/app.ts";

/**
 * Debian's Chromium (installed by scripts/test-packages.sh), started headless without the
 * background services that would try to reach Google on this machine's closed network.
 */
const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions",
  "--metrics-recording-only",
];

let shared: Promise<Browser> | undefined;

/** The worker process's browser, started at its first use or again if it went away. */
async function processBrowser(): Promise<Browser> {
  const running = await shared;
  if (running?.isConnected()) return running;
  shared = chromium.launch({
    executablePath: process.env["QUIRE_CHROMIUM"] ?? "/usr/bin/chromium",
    args: CHROMIUM_FLAGS,
  });
  return shared;
}

/**
 * One browser for the test files of a worker process (starting one is the slow part; the files
 * share the process, vitest.config.ts), and contexts per test. It is never closed here: Chromium
 * ends when the process that started it does, as its pipe to Playwright closes.
 */
export function useBrowser(): { readonly browser: Browser } {
  const holder: { browser?: Browser } = {};
  beforeAll(async () => {
    holder.browser = await processBrowser();
  });
  return {
    get browser() {
      if (!holder.browser) throw new Error("the browser is not started yet");
      return holder.browser;
    },
  };
}

/**
 * A browser context signed in as `email` with a bearer ID token from the test identity provider
 * on every request (the pages, the live script's event stream and its re-fetches alike).
 */
export async function signedInContext(
  browser: Browser,
  app: TestApp,
  email: string,
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  const token = await app.idp.token(email);
  return browser.newContext({
    ...options,
    baseURL: app.url,
    extraHTTPHeaders: { authorization: `Bearer ${token}` },
  });
}

/**
 * `pageAs(email, options?)`: a new page in a context signed in as `email` (signedInContext),
 * closed after each test.
 */
export function useSignedInPages(
  app: TestApp,
  chrome: { readonly browser: Browser },
): (email: string, options?: BrowserContextOptions) => Promise<Page> {
  const contexts: BrowserContext[] = [];
  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close();
  });
  return async (email, options = {}) => {
    const context = await signedInContext(chrome.browser, app, email, options);
    contexts.push(context);
    return context.newPage();
  };
}

/** Every page's console errors and CSP violations, to assert a page ran clean. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}

const ARTIFACTS = path.resolve("test-results/web");

/**
 * Saves a screenshot of the page as the test's artifact (test-results/web/<name>.png): the whole
 * page, or with `{ fullPage: false }` only the viewport (smaller, as docs/web/ keeps them).
 */
export async function screenshot(
  page: Page,
  name: string,
  opts: { fullPage?: boolean } = {},
): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name.replace(/[^\w.-]+/g, "-")}.png`);
  // Headless Chromium now and then answers "Unable to capture screenshot" for a frame it had not
  // drawn yet, under load (once in a fresh clone's CI run, twice in a row): the artifact is worth
  // more tries, each after the page has drawn another frame, not a failed test.
  for (let attempt = 1; ; attempt++) {
    try {
      await page.screenshot({ path: file, fullPage: opts.fullPage ?? true });
      return file;
    } catch (err) {
      if (attempt >= 4 || !String(err).includes("Unable to capture screenshot")) throw err;
      await page.evaluate("new Promise((drawn) => requestAnimationFrame(() => drawn(null)))");
    }
  }
}
